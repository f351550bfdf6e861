#include "agent/kfd_backend.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "devices/arch_traits.h"

namespace ctxsel::agent {
namespace {

constexpr char kNodes[] = "class/kfd/kfd/topology/nodes";

class KfdBackend : public DiscoveryBackend {
 public:
  explicit KfdBackend(Sysfs sysfs) : sysfs_(std::move(sysfs)) {}

  std::string name() const override { return "kfd"; }

  absl::StatusOr<std::vector<DeviceInfo>> Discover() override {
    std::vector<DeviceInfo> devices;
    // ROCm numbers GPUs in KFD node order: sort "10" after "9".
    std::vector<std::string> nodes = sysfs_.List(kNodes);
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const std::string& a, const std::string& b) {
                       return a.size() != b.size() ? a.size() < b.size()
                                                   : a < b;
                     });
    for (const std::string& node : nodes) {
      std::string dir = absl::StrCat(kNodes, "/", node);
      CTXSEL_ASSIGN_OR_RETURN(auto props,
                              sysfs_.ReadProperties(dir + "/properties"));
      int64_t version = Get(props, "gfx_target_version");
      if (version == 0) continue;  // a CPU node
      std::string gfx = GfxName(version);
      if (gfx.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(dir, "/properties: bad gfx_target_version ", version));
      }
      devices.push_back(Describe(dir, gfx, props));
      devices.back().vendor_index = static_cast<int>(devices.size()) - 1;
    }
    return devices;
  }

 private:
  static int64_t Get(const std::map<std::string, int64_t>& props,
                     const std::string& key) {
    auto it = props.find(key);
    return it == props.end() ? 0 : it->second;
  }

  DeviceInfo Describe(const std::string& dir, const std::string& gfx,
                      const std::map<std::string, int64_t>& props) const {
    DeviceInfo d;
    d.backend = name();
    d.sycl_architecture = "amd_gpu_" + gfx;
    if (!ApplyArchTraits(d).ok()) ApplyUnknownGpuTraits(d, "amd", gfx);
    d.name = sysfs_.Read(dir + "/name").value_or(gfx);
    int64_t simd_per_cu = Get(props, "simd_per_cu");
    if (simd_per_cu > 0)
      d.compute_units = Get(props, "simd_count") / simd_per_cu;
    for (const std::string& bank : sysfs_.List(dir + "/mem_banks")) {
      auto bank_props = sysfs_.ReadProperties(
          absl::StrCat(dir, "/mem_banks/", bank, "/properties"));
      if (bank_props.ok()) d.memory_bytes += Get(*bank_props, "size_in_bytes");
    }
    d.attributes["pci_device_id"] =
        absl::StrFormat("0x%04x", Get(props, "device_id"));
    if (int64_t location = Get(props, "location_id")) {
      d.attributes["pci_location"] =
          absl::StrFormat("%02x:%02x.%x", (location >> 8) & 0xff,
                          (location >> 3) & 0x1f, location & 0x7);
      d.pci_bus_id = absl::StrFormat("%04x:%s", Get(props, "domain"),
                                     d.attributes["pci_location"]);
    }
    // ROCm prints a GPU's UUID as "GPU-" and KFD's unique_id in hex, and
    // ROCR_VISIBLE_DEVICES accepts it.
    if (int64_t unique_id = Get(props, "unique_id")) {
      d.uuid = absl::StrFormat("GPU-%016x", static_cast<uint64_t>(unique_id));
    }
    if (props.count("drm_render_minor")) {
      std::string busy =
          absl::StrCat("class/drm/renderD", Get(props, "drm_render_minor"),
                       "/device/gpu_busy_percent");
      absl::StatusOr<int64_t> percent = sysfs_.ReadInt(busy);
      if (percent.ok()) d.utilisation = *percent / 100.0;
      CheckRas(absl::StrCat("class/drm/renderD", Get(props, "drm_render_minor"),
                            "/device/ras"),
               d);
    }
    return d;
  }

  // amdgpu's RAS counters (device/ras/<block>_err_count: "ue: N\nce: M"):
  // uncorrectable errors in any block make the GPU degraded.
  void CheckRas(const std::string& dir, DeviceInfo& d) const {
    int64_t uncorrectable = 0;
    std::string blocks;
    for (const std::string& file : sysfs_.List(dir)) {
      if (!absl::EndsWith(file, "_err_count")) continue;
      absl::StatusOr<std::string> text = sysfs_.Read(dir + "/" + file);
      if (!text.ok()) continue;
      for (absl::string_view line : absl::StrSplit(*text, '\n')) {
        int64_t n = 0;
        if (absl::ConsumePrefix(&line, "ue:") &&
            absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &n) && n > 0) {
          uncorrectable += n;
          absl::StrAppend(&blocks, blocks.empty() ? "" : ", ",
                          file.substr(0, file.size() - 10));
        }
      }
    }
    if (uncorrectable > 0) {
      d.health = DeviceHealth::kDegraded;
      d.health_reason = absl::StrCat(
          uncorrectable, " uncorrectable RAS errors (", blocks, ")");
    }
  }

  Sysfs sysfs_;
};

}  // namespace

std::string GfxName(int64_t version) {
  int64_t major = version / 10000;
  int64_t minor = (version / 100) % 100;
  int64_t stepping = version % 100;
  if (major <= 0 || minor > 9 || stepping > 15) return "";
  return absl::StrFormat("gfx%d%d%x", major, minor, stepping);
}

std::unique_ptr<DiscoveryBackend> MakeKfdBackend(Sysfs sysfs) {
  return std::make_unique<KfdBackend>(std::move(sysfs));
}

}  // namespace ctxsel::agent
