#include "formats/gres_conf.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ctxsel::slurm {
namespace {

// A range wider than this in File= or NodeName= is a typo.
constexpr int kMaxRange = 4096;

// The node's GPUs in ctxsel's numbering: devices with a vendor index.
std::vector<const v1::Device*> Gpus(const std::vector<v1::Device>& devices) {
  std::vector<const v1::Device*> gpus;
  for (const v1::Device& d : devices) {
    if (d.index() >= 0 && d.has_vendor_index()) gpus.push_back(&d);
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const v1::Device* a, const v1::Device* b) {
              return a->vendor_index() < b->vendor_index();
            });
  return gpus;
}

std::string Vendor(const v1::Device& d) {
  return d.traits().vendor().empty() ? "" : d.traits().vendor(0);
}

// nvidia_gpu_sm_90 -> sm_90: the part that tells GPUs of a vendor apart.

absl::StatusOr<std::string> FilePrefix(const v1::Device& d,
                                       absl::string_view file_prefix) {
  if (!file_prefix.empty()) return std::string(file_prefix);
  if (Vendor(d) == "nvidia") return std::string("/dev/nvidia");
  return absl::InvalidArgumentError(absl::StrCat(
      "--file_prefix: ", d.id(), " is a ", Vendor(d),
      " GPU, whose device files ctxsel cannot name; give the path before "
      "its number"));
}

// "a[0-2,5]b" -> a0b a1b a2b a5b (one bracket group, widths kept: [01-03]).
absl::StatusOr<std::vector<std::string>> Expand(absl::string_view text) {
  const size_t open = text.find('[');
  if (open == absl::string_view::npos)
    return std::vector<std::string>{std::string(text)};
  const size_t close = text.find(']', open);
  if (close == absl::string_view::npos ||
      text.find('[', close) != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': want one [a-b,c] range"));
  }
  const absl::string_view head = text.substr(0, open);
  const absl::string_view tail = text.substr(close + 1);
  std::vector<std::string> out;
  for (absl::string_view part :
       absl::StrSplit(text.substr(open + 1, close - open - 1), ',')) {
    std::vector<absl::string_view> bounds = absl::StrSplit(part, '-');
    int first = 0, last = 0;
    if (bounds.size() > 2 || !absl::SimpleAtoi(bounds.front(), &first) ||
        !absl::SimpleAtoi(bounds.back(), &last) || first > last ||
        last - first > kMaxRange) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "': '", part, "' is not a range"));
    }
    const size_t width = bounds.front().size();
    for (int i = first; i <= last; ++i) {
      std::string number = std::to_string(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      out.push_back(absl::StrCat(head, number, tail));
    }
  }
  return out;
}

// Slurm's number of a device file: the first digits of its name.
int IndexOfFile(absl::string_view file) {
  const size_t slash = file.rfind('/');
  absl::string_view name =
      slash == absl::string_view::npos ? file : file.substr(slash + 1);
  const size_t digit = name.find_first_of("0123456789");
  if (digit == absl::string_view::npos) return -1;
  name.remove_prefix(digit);
  const size_t end = name.find_first_not_of("0123456789");
  int index = -1;
  if (!absl::SimpleAtoi(name.substr(0, end), &index)) return -1;
  return index;
}

std::string Where(const GresDevice& g) {
  return absl::StrCat(
      "gres.conf line ", g.line,
      g.file.empty() ? "" : absl::StrCat(" (File=", g.file, ")"));
}

std::string Describe(const v1::Device& d) {
  return absl::StrCat(d.id(), " (vendor index ", d.vendor_index(),
                      d.uuid().empty() ? "" : absl::StrCat(", ", d.uuid()),
                      ")");
}

}  // namespace

std::string GresType(const v1::Device& d) {
  const std::string& arch = d.sycl_architecture();
  const size_t gpu = arch.find("_gpu_");
  if (gpu != std::string::npos) return arch.substr(gpu + 5);
  if (!d.device_class_short_name().empty()) return d.device_class_short_name();
  return "gpu";
}

absl::StatusOr<std::string> GresConf(const std::string& node,
                                     const std::vector<v1::Device>& devices,
                                     absl::string_view file_prefix) {
  std::vector<const v1::Device*> gpus = Gpus(devices);
  if (gpus.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("node ", node, " has no GPU with a vendor index"));
  }
  std::set<std::string> vendors;
  for (const v1::Device* d : gpus) vendors.insert(Vendor(*d));
  if (vendors.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", node, " has GPUs of ", absl::StrJoin(vendors, " and "),
        ": Slurm's one GPU numbering cannot follow two vendors' indices"));
  }
  std::string out = absl::StrCat("# ctxsel-cli slurm gres-conf --node=", node,
                                 ": GPU N is vendor index N\n");
  for (const v1::Device* d : gpus) {
    absl::StatusOr<std::string> prefix = FilePrefix(*d, file_prefix);
    if (!prefix.ok()) return prefix.status();
    absl::StrAppend(&out, "Name=gpu Type=", GresType(*d), " File=", *prefix,
                    d->vendor_index(), " # ctxsel ", d->id(),
                    d->uuid().empty() ? "" : absl::StrCat(" ", d->uuid()),
                    "\n");
  }
  return out;
}

absl::StatusOr<std::vector<GresDevice>> ParseGres(absl::string_view text,
                                                  absl::string_view node) {
  std::vector<GresDevice> out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view body = line, comment;
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      body = line.substr(0, hash);
      comment = absl::StripAsciiWhitespace(line.substr(hash + 1));
    }
    // `slurmd -G`: "slurmd: Gres Name=gpu Type=... Index=1 ... File=..."
    if (const size_t gres = body.find("Gres Name=");
        gres != absl::string_view::npos) {
      body = body.substr(gres + 5);
    }
    std::map<std::string, std::string> fields;
    for (absl::string_view token :
         absl::StrSplit(body, absl::ByAnyChar(" \t\r"), absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(token, absl::MaxSplits('=', 1));
      fields[absl::AsciiStrToLower(kv.first)] = kv.second;
    }
    if (fields["name"] != "gpu") continue;
    auto error = [&](const absl::Status& status) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", status.message()));
    };
    if (!fields["nodename"].empty()) {
      absl::StatusOr<std::vector<std::string>> nodes =
          Expand(fields["nodename"]);
      if (!nodes.ok()) return error(nodes.status());
      if (std::find(nodes->begin(), nodes->end(), node) == nodes->end()) {
        continue;
      }
    }
    GresDevice device;
    device.line = number;
    device.type = fields["type"];
    if (absl::ConsumePrefix(&comment, "ctxsel ")) {
      device.ctxsel =
          std::string(comment.substr(0, comment.find_first_of(" \t")));
    }
    int given_index = -1;
    if (!fields["index"].empty() &&
        !absl::SimpleAtoi(fields["index"], &given_index)) {
      return error(absl::InvalidArgumentError(
          absl::StrCat("Index=", fields["index"], " is not a number")));
    }
    std::vector<std::string> files = {""};
    if (!fields["file"].empty()) {
      absl::StatusOr<std::vector<std::string>> expanded =
          Expand(fields["file"]);
      if (!expanded.ok()) return error(expanded.status());
      files = *std::move(expanded);
    }
    for (const std::string& file : files) {
      device.file = file;
      device.index = given_index >= 0 && files.size() == 1 ? given_index
                                                           : IndexOfFile(file);
      out.push_back(device);
    }
  }
  return out;
}

std::vector<std::string> CompareGres(const std::vector<GresDevice>& slurm,
                                     const std::string& node,
                                     const std::vector<v1::Device>& devices,
                                     absl::string_view file_prefix) {
  std::vector<std::string> out;
  std::map<int, std::vector<const GresDevice*>> by_index;
  for (const GresDevice& g : slurm) {
    if (g.index < 0) {
      out.push_back(absl::StrCat(Where(g),
                                 ": a GPU without a numbered File=, which "
                                 "Slurm cannot name in SLURM_STEP_GPUS"));
      continue;
    }
    by_index[g.index].push_back(&g);
  }
  std::set<int> ours;
  for (const v1::Device* d : Gpus(devices)) {
    const int index = d->vendor_index();
    ours.insert(index);
    const std::vector<const GresDevice*>& found = by_index[index];
    if (found.empty()) {
      out.push_back(absl::StrCat(Describe(*d), ": Slurm has no GPU ", index,
                                 " on node ", node));
      continue;
    }
    if (found.size() > 1) {
      std::vector<std::string> lines;
      for (const GresDevice* g : found) lines.push_back(Where(*g));
      out.push_back(absl::StrCat(
          Describe(*d), ": Slurm's GPU ", index,
          " is on more than one line: ", absl::StrJoin(lines, ", ")));
      continue;
    }
    const GresDevice& g = *found.front();
    if (!g.ctxsel.empty() && g.ctxsel != d->id()) {
      out.push_back(absl::StrCat(Describe(*d), ": Slurm's GPU ", index, " is ",
                                 Where(g), ", which names ", g.ctxsel,
                                 " (the device files were renumbered?)"));
    }
    if (!g.type.empty() && g.type != GresType(*d)) {
      out.push_back(absl::StrCat(Describe(*d), ": Slurm's GPU ", index, " (",
                                 Where(g), ") has Type=", g.type,
                                 ", ctxsel's has Type=", GresType(*d)));
    }
    absl::StatusOr<std::string> prefix = FilePrefix(*d, file_prefix);
    if (prefix.ok() && !g.file.empty() &&
        g.file != absl::StrCat(*prefix, index)) {
      out.push_back(absl::StrCat(Describe(*d), ": Slurm's GPU ", index, " is ",
                                 Where(g), ", not ", *prefix, index));
    }
  }
  for (const auto& [index, found] : by_index) {
    if (ours.count(index) != 0) continue;
    for (const GresDevice* g : found) {
      out.push_back(absl::StrCat(Where(*g), ": Slurm's GPU ", index,
                                 " is no GPU of ctxsel's node ", node));
    }
  }
  return out;
}

std::string SubmitOptions(const std::vector<v1::PlacementChoice>& ranks) {
  std::map<std::string, int> per_type;  // sorted, so the text is stable
  for (const v1::PlacementChoice& rank : ranks) {
    const auto& kinds = rank.device().traits().kind();
    if (std::find(kinds.begin(), kinds.end(), "gpu") == kinds.end()) continue;
    ++per_type[GresType(rank.device())];
  }
  if (per_type.empty()) return "";
  std::vector<std::string> gres;
  for (const auto& [type, count] : per_type) {
    gres.push_back(absl::StrCat("gpu:", type, ":", count));
  }
  return absl::StrCat("--gres=", absl::StrJoin(gres, ","));
}

}  // namespace ctxsel::slurm
