#include "client/cli/launcher_env.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "launch/launch_env.h"

namespace ctxsel::cli {
namespace {

constexpr absl::string_view kVisibilityVariables[] = {
#define VISIBILITY_ENV(Vendor, Variable, AcceptsUuid, OrderVariable, \
                       OrderValue)                                   \
  Variable,
#include "launch/visibility_env.def"
};

// A range wider than a node's GPUs is a typo, not an allocation.
constexpr int kMaxRange = 1024;

bool IsSlurm(absl::string_view variable) {
  return absl::StartsWith(variable, "SLURM_");
}

// The runtime whose numbering `variable` uses: HIP counts as ROCm does (HIP
// renumbers within ROCR_VISIBLE_DEVICES, which --from_allocation reads first).
absl::string_view RuntimeVariable(absl::string_view variable) {
  return variable == "HIP_VISIBLE_DEVICES" ? "ROCR_VISIBLE_DEVICES" : variable;
}

// The visibility variable that LaunchEnv pins `device` with, "" when none
// (the host CPU, a vendor without one). Asking LaunchEnv keeps one rule of
// which runtime numbers which device.
std::string VisibilityVariable(const v1::Device& device) {
  v1::PlacementChoice choice;
  *choice.mutable_device() = device;
  for (const auto& [name, value] : launch::LaunchEnv(choice, "")) {
    for (absl::string_view v : kVisibilityVariables) {
      if (name == v) return name;
    }
  }
  return "";
}

// "GPU-8c5b4a1e-...", "MIG-...": letters, digits and dashes, starting with a
// letter (CUDA_VISIBLE_DEVICES=-1 hides every device) and with a dash
// (Slurm's "NoDevFiles" is no device).
bool IsUuid(absl::string_view entry) {
  if (entry.empty() || !absl::ascii_isalpha(entry[0]) ||
      !absl::StrContains(entry, '-')) {
    return false;
  }
  for (char c : entry) {
    if (!absl::ascii_isalnum(c) && c != '-') return false;
  }
  return true;
}

bool ParseIndex(absl::string_view text, int* index) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(c);
  }) && absl::SimpleAtoi(text, index);
}

// The vendor indices `entry` names; empty for a UUID. An error text when
// it is neither.
absl::StatusOr<std::vector<int>> EntryIndices(absl::string_view variable,
                                              absl::string_view entry) {
  int first = 0;
  if (ParseIndex(entry, &first)) return std::vector<int>{first};
  if (IsSlurm(variable)) {
    std::vector<absl::string_view> range = absl::StrSplit(entry, '-');
    int last = 0;
    if (range.size() == 2 && ParseIndex(range[0], &first) &&
        ParseIndex(range[1], &last) && first <= last &&
        last - first < kMaxRange) {
      std::vector<int> out;
      for (int i = first; i <= last; ++i) out.push_back(i);
      return out;
    }
    return absl::InvalidArgumentError("not a GRES index or range");
  }
  if (variable == "ZE_AFFINITY_MASK") {
    // "N.M" is tile M of device N; ctxsel places whole devices.
    std::vector<absl::string_view> parts = absl::StrSplit(entry, '.');
    int sub = 0;
    if (parts.size() == 2 && ParseIndex(parts[0], &first) &&
        ParseIndex(parts[1], &sub)) {
      return std::vector<int>{first};
    }
  }
  if (IsUuid(entry)) return std::vector<int>{};
  return absl::InvalidArgumentError("neither a device index nor a UUID");
}

// The id of the device of `variable`'s runtime with vendor index `index`.
absl::StatusOr<std::string> DeviceWithIndex(
    absl::string_view variable, int index, const std::string& node,
    const std::vector<v1::Device>& devices) {
  std::vector<const v1::Device*> found;
  std::vector<std::string> indices;  // what the node has, for the message
  for (const v1::Device& d : devices) {
    const std::string pinned_by = VisibilityVariable(d);
    if (pinned_by.empty() || !d.has_vendor_index()) continue;
    if (!IsSlurm(variable) && pinned_by != RuntimeVariable(variable)) continue;
    indices.push_back(absl::StrCat(d.id(), " ", d.vendor_index()));
    if (d.vendor_index() == index) found.push_back(&d);
  }
  if (found.size() == 1) return found[0]->id();
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", node, " has no device with vendor index ", index, " (",
        indices.empty() ? "it has none of this runtime"
                        : absl::StrCat("it has ", absl::StrJoin(indices, ", ")),
        ")"));
  }
  std::vector<std::string> ids;
  for (const v1::Device* d : found) ids.push_back(d->id());
  return absl::InvalidArgumentError(absl::StrCat(
      "vendor index ", index, " is ambiguous on node ", node, " (",
      absl::StrJoin(ids, ", "), "): name the devices with --devices instead"));
}

}  // namespace

const char* ProcessGetenv(const char* name) { return std::getenv(name); }

absl::StatusOr<AllocationVariable> FindAllocation(const Getenv& getenv) {
  for (const char* name : kAllocationVariables) {
    if (const char* value = getenv(name); value != nullptr) {
      return AllocationVariable{name, value};
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("none of ", absl::StrJoin(kAllocationVariables, ", "),
                   " is set: no launcher allocation to read"));
}

absl::StatusOr<std::vector<std::string>> AllowedDevices(
    const AllocationVariable& allocation, const std::string& node,
    const std::vector<v1::Device>& node_devices) {
  auto error = [&](absl::string_view entry, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        allocation.name, "=", allocation.value,
        entry.empty() ? "" : absl::StrCat(": '", entry, "'"), ": ", why));
  };
  std::vector<std::string> out;
  auto add = [&out](std::string id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) {
      out.push_back(std::move(id));
    }
  };
  for (absl::string_view entry :
       absl::StrSplit(allocation.value, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    absl::StatusOr<std::vector<int>> indices =
        EntryIndices(allocation.name, entry);
    if (!indices.ok()) return error(entry, indices.status().message());
    if (indices->empty()) add(std::string(entry));  // a UUID: the server's
    for (int index : *indices) {
      absl::StatusOr<std::string> id =
          DeviceWithIndex(allocation.name, index, node, node_devices);
      if (!id.ok()) return error(entry, id.status().message());
      add(*std::move(id));
    }
  }
  if (out.empty()) return error("", "names no device");
  return out;
}

absl::StatusOr<std::optional<int>> RankFromEnvironment(const Getenv& getenv) {
  for (const char* name : kRankVariables) {
    const char* value = getenv(name);
    if (value == nullptr) continue;
    int rank = 0;
    if (!ParseIndex(value, &rank)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "=", value, ": not a rank (a non-negative integer)"));
    }
    return rank;
  }
  return std::nullopt;
}

std::string SlurmHolder(const Getenv& getenv) {
  const char* job = getenv("SLURM_JOB_ID");
  const char* step = getenv("SLURM_STEP_ID");
  if (job == nullptr || *job == '\0' || step == nullptr || *step == '\0') {
    return "";
  }
  return absl::StrCat("slurm-", job, ".", step);
}

}  // namespace ctxsel::cli
