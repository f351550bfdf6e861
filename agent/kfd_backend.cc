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
    // ROCm numbers GPUs in KFD node order: sort "10" after "9".
    std::vector<std::string> nodes = sysfs_.List(kNodes);
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const std::string& a, const std::string& b) {
                       return a.size() != b.size() ? a.size() < b.size()
                                                   : a < b;
                     });
    // The GPU nodes, grouped by board: a partitioned GPU (compute
    // partitions, amdgpu's DPX/QPX/CPX modes) is one KFD node per
    // partition, all at the board's PCI bus and device.
    std::vector<std::vector<Found>> boards;
    int rocm_index = 0;
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
      Found found{Describe(dir, gfx, props), BoardKey(props),
                  props.count("drm_render_minor") > 0
                      ? absl::StrCat("class/drm/renderD",
                                     Get(props, "drm_render_minor"), "/device")
                      : ""};
      found.device.vendor_index = rocm_index++;
      auto board = std::find_if(
          boards.begin(), boards.end(), [&](const std::vector<Found>& b) {
            return found.board != 0 && b.front().board == found.board;
          });
      if (board == boards.end()) {
        boards.push_back({std::move(found)});
      } else {
        board->push_back(std::move(found));
      }
    }
    std::vector<DeviceInfo> devices;
    for (std::vector<Found>& board : boards) AddBoard(board, devices);
    return devices;
  }

 private:
  struct Found {
    DeviceInfo device;
    int64_t board;           // BoardKey; 0 when KFD gives no location
    std::string pci_device;  // its DRM device's sysfs folder, or ""
  };

  // The board's PCI domain, bus and device. The kernel puts a partition's
  // number in location_id too, in the function bits or (some releases) in
  // bits 31..28, so both are left out.
  static int64_t BoardKey(const std::map<std::string, int64_t>& props) {
    const int64_t location = Get(props, "location_id") & 0xfff8;
    if (location == 0) return 0;
    return (Get(props, "domain") << 16) | location;
  }

  // One board's devices: a whole GPU as it is; a partitioned one as a
  // device for the board with its partitions after it, each naming it as
  // its parent (as NVML's MIG instances do), so a claim on the board
  // blocks its partitions and the reverse. amdgpu's modes become the
  // attributes "compute_partition" ("SPX", "DPX", "CPX", ...) and
  // "memory_partition" ("NPS1", ...) where the driver has them.
  void AddBoard(std::vector<Found>& board,
                std::vector<DeviceInfo>& devices) const {
    std::string compute_mode, memory_mode;
    DeviceHealth health = DeviceHealth::kHealthy;
    std::string health_reason;
    for (const Found& f : board) {
      if (f.pci_device.empty()) continue;
      if (compute_mode.empty()) {
        compute_mode = ReadMode(f.pci_device + "/current_compute_partition");
        memory_mode = ReadMode(f.pci_device + "/current_memory_partition");
      }
      if (Worse(health, f.device.health) != health) {
        health = f.device.health;
        health_reason = f.device.health_reason;
      }
    }
    auto set_modes = [&](DeviceInfo& d) {
      if (!compute_mode.empty())
        d.attributes["compute_partition"] = compute_mode;
      if (!memory_mode.empty()) d.attributes["memory_partition"] = memory_mode;
    };
    const std::string uuid = board.front().device.uuid;
    if (board.size() == 1 || uuid.empty()) {
      // Without a UUID no partition could name its board: each is whole.
      for (Found& f : board) {
        set_modes(f.device);
        devices.push_back(std::move(f.device));
      }
      return;
    }
    // RAS counters and busy time are the board's: the first node's PCI
    // device has them, the other partitions' platform devices do not.
    DeviceInfo parent = board.front().device;
    parent.vendor_index = -1;  // no ROCm agent of its own in this mode
    parent.compute_units = 0;
    parent.memory_bytes = 0;
    parent.health = health;
    parent.health_reason = health_reason;
    for (const Found& f : board) {
      parent.compute_units += f.device.compute_units;
      parent.memory_bytes += f.device.memory_bytes;
    }
    const std::string location = absl::StrCat(
        parent.attributes["pci_location"].substr(0, 6), "0");  // "c1:00.0"
    parent.attributes["pci_location"] = location;
    if (!parent.pci_bus_id.empty()) {
      parent.pci_bus_id =
          absl::StrCat(parent.pci_bus_id.substr(0, 5), location);
    }
    set_modes(parent);
    devices.push_back(parent);
    for (size_t i = 0; i < board.size(); ++i) {
      DeviceInfo& d = board[i].device;
      // Partitions share the board's unique_id: ROCm tells them apart by
      // their number (vendor_index), so the UUID stays the board's.
      if (d.uuid == uuid) d.uuid.clear();
      d.parent = uuid;
      d.pci_bus_id = parent.pci_bus_id;
      d.attributes["pci_location"] = location;
      d.attributes["partition_index"] = absl::StrCat(i);
      d.health = health;
      d.health_reason = health_reason;
      set_modes(d);
      devices.push_back(std::move(d));
    }
  }

  // A partition mode file's value ("CPX"), or "" when absent.
  std::string ReadMode(const std::string& path) const {
    absl::StatusOr<std::string> text = sysfs_.Read(path);
    if (!text.ok()) return "";
    return std::string(absl::StripAsciiWhitespace(*text));
  }

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
