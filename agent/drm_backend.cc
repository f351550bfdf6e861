#include "agent/drm_backend.h"

#include <regex>
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
    CheckHealth(card, dir, d);
    return d;
  }

  // What the kernel's sysfs says of the GPU's health, where it says it
  // (Level Zero's sysman needs the runtime): PCIe AER counters of the
  // device (fatal: unhealthy; non-fatal: degraded), i915's captured error
  // state (a hang or reset, kept until an operator clears it) and a
  // devcoredump the driver (xe, i915) left, which the kernel drops after 5
  // minutes: each degraded. The worst one, with its reason, is the device's.
  void CheckHealth(const std::string& card, const std::string& dir,
                   DeviceInfo& d) const {
    auto report = [&](DeviceHealth health, std::string reason) {
      if (Worse(d.health, health) == d.health) return;
      d.health = health;
      d.health_reason = std::move(reason);
    };
    if (int64_t n = AerTotal(dir + "/aer_dev_nonfatal", "TOTAL_ERR_NONFATAL")) {
      report(DeviceHealth::kDegraded,
             absl::StrCat(n, " non-fatal PCIe errors (AER)"));
    }
    if (sysfs_.Exists(dir + "/devcoredump")) {
      report(DeviceHealth::kDegraded,
             "the driver dumped a GPU crash state (devcoredump)");
    }
    absl::StatusOr<std::string> error =
        sysfs_.Read(absl::StrCat("class/drm/", card, "/error"));
    if (error.ok() && !absl::StripAsciiWhitespace(*error).empty() &&
        !absl::StartsWith(*error, "No error state collected")) {
      report(DeviceHealth::kDegraded,
             "i915 captured a GPU error state (a hang or reset)");
    }
    if (int64_t n = AerTotal(dir + "/aer_dev_fatal", "TOTAL_ERR_FATAL")) {
      report(DeviceHealth::kUnhealthy,
             absl::StrCat(n, " fatal PCIe errors (AER)"));
    }
  }

  // The `total` line of an AER counters file ("TOTAL_ERR_FATAL 2"); 0 when
  // the file or the line is absent.
  int64_t AerTotal(const std::string& path, absl::string_view total) const {
    absl::StatusOr<std::string> text = sysfs_.Read(path);
    if (!text.ok()) return 0;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      int64_t n = 0;
      if (absl::ConsumePrefix(&line, total) &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &n)) {
        return n;
      }
    }
    return 0;
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
