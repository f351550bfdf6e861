#include "agent/device_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ctxsel::agent {
namespace {

void AppendList(std::string& out, const char* label,
                const std::vector<std::string>& values) {
  if (values.empty()) return;
  absl::StrAppend(&out, "  ", label, ": ", absl::StrJoin(values, " "), "\n");
}

std::string Bytes(int64_t bytes) {
  return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / (1 << 30));
}

}  // namespace

std::string DevicesToText(const std::string& node,
                          const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return absl::StrCat(node, ": no devices found\n");
  std::string out;
  for (const DeviceInfo& d : devices) {
    absl::StrAppend(&out, d.id, " (device ", d.index,
                    "): ", d.name.empty() ? "(unnamed)" : d.name, "\n");
    absl::StrAppend(
        &out, "  sycl_architecture: ",
        d.sycl_architecture.empty() ? "(unknown)" : d.sycl_architecture,
        "   backend: ", d.backend, "\n");
#define DEVICE_TRAIT(member, Id, Name, Weight) AppendList(out, Name, d.member);
#include "selector/device_traits.def"

    absl::StrAppend(&out, "  memory: ", Bytes(d.memory_bytes),
                    "   compute units: ", d.compute_units);
    if (d.threads > 0) absl::StrAppend(&out, "   threads: ", d.threads);
    if (d.numa_nodes > 0)
      absl::StrAppend(&out, "   numa nodes: ", d.numa_nodes);
    absl::StrAppendFormat(&out, "   utilisation: %.0f%%\n",
                          100 * d.utilisation);
    if (!d.parent.empty())
      absl::StrAppend(&out, "  partition of: ", d.parent, "\n");
    if (d.health != DeviceHealth::kHealthy) {
      absl::StrAppend(&out, "  health: ", DeviceHealthName(d.health), " (",
                      d.health_reason, ")\n");
    }
    for (const auto& [key, value] : d.attributes) {
      absl::StrAppend(&out, "  ", key, ": ", value, "\n");
    }
  }
  return out;
}

}  // namespace ctxsel::agent
