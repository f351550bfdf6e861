#include "agent/drm_backend.h"

#include <regex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "devices/arch_traits.h"

namespace ctxsel::agent {
namespace {

constexpr uint32_t kIntelVendor = 0x8086;

struct IdRow {
  uint32_t pci_id;
  const char* sycl_architecture;
  const char* product;
};

constexpr IdRow kIntelGpus[] = {
#define INTEL_GPU(pci_id, sycl_architecture, product) \
  {pci_id, sycl_architecture, product},
#include "agent/intel_gpu_ids.def"
#undef INTEL_GPU
};

// PCI_SLOT_NAME from a device's uevent, e.g. "0000:3a:00.0".
std::string PciSlot(const Sysfs& sysfs, const std::string& device_dir) {
  absl::StatusOr<std::string> uevent = sysfs.Read(device_dir + "/uevent");
  if (!uevent.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*uevent, '\n')) {
    if (absl::ConsumePrefix(&line, "PCI_SLOT_NAME=")) return std::string(line);
  }
  return "";
}

class DrmBackend : public DiscoveryBackend {
 public:
  explicit DrmBackend(Sysfs sysfs) : sysfs_(std::move(sysfs)) {}

  std::string name() const override { return "drm"; }

  absl::StatusOr<std::vector<DeviceInfo>> Discover() override {
    static const std::regex kCard("card[0-9]+");
    std::vector<DeviceInfo> devices;
    for (const std::string& card : sysfs_.List("class/drm")) {
      if (!std::regex_match(card, kCard)) continue;  // connectors, renderD*
      std::string dir = absl::StrCat("class/drm/", card, "/device");
      absl::StatusOr<int64_t> vendor = sysfs_.ReadInt(dir + "/vendor");
      if (!vendor.ok() || *vendor != kIntelVendor) continue;
      CTXSEL_ASSIGN_OR_RETURN(int64_t device, sysfs_.ReadInt(dir + "/device"));
      devices.push_back(Describe(card, dir, static_cast<uint32_t>(device)));
    }
    return devices;
  }

 private:
  DeviceInfo Describe(const std::string& card, const std::string& dir,
                      uint32_t pci_id) const {
    DeviceInfo d;
    d.backend = name();
    IntelGpuId id = LookupIntelGpu(pci_id);
    d.sycl_architecture = id.sycl_architecture;
    if (!ApplyArchTraits(d).ok()) ApplyUnknownGpuTraits(d, "intel", "");
    d.name = id.product.empty() ? absl::StrFormat("Intel GPU 0x%04x", pci_id)
                                : "Intel " + id.product;
    d.attributes["pci_device_id"] = absl::StrFormat("0x%04x", pci_id);
    std::string slot = PciSlot(sysfs_, dir);
    if (!slot.empty()) d.attributes["pci_location"] = slot;
    d.pci_bus_id = slot;
    d.attributes["drm_card"] = card;
    d.memory_bytes =
        sysfs_.ReadInt(absl::StrCat("class/drm/", card, "/lmem_total_bytes"))
            .value_or(0);
    return d;
  }

  Sysfs sysfs_;
};

}  // namespace

IntelGpuId LookupIntelGpu(uint32_t pci_id) {
  for (const IdRow& row : kIntelGpus) {
    if (row.pci_id == pci_id) return {row.sycl_architecture, row.product};
  }
  return {};
}

std::vector<uint32_t> KnownIntelGpuPciIds() {
  std::vector<uint32_t> ids;
  for (const IdRow& row : kIntelGpus) ids.push_back(row.pci_id);
  return ids;
}

std::unique_ptr<DiscoveryBackend> MakeDrmBackend(Sysfs sysfs) {
  return std::make_unique<DrmBackend>(std::move(sysfs));
}

}  // namespace ctxsel::agent
