// DeviceInfo: one compute device of a node, as ctxsel-agent describes it.
//
// Discovery backends (CPU, NVML, KFD, DRM, devices file) each yield
// DeviceInfo values; the agent reports them to the server as the API's device
// message. The trait lists (`kind`, `arch`, `isa`, `vendor`, ...) are exactly
// the OpenMP `device` trait-set properties a context selector tests, so the
// selector engine can match against them directly.
//
//   DeviceInfo gpu;
//   gpu.sycl_architecture = "nvidia_gpu_sm_90";
//   ApplyArchTraits(gpu);       // kind {gpu, nohost}, arch {nvptx, ...}
//   gpu.memory_bytes = 80ull << 30;
#ifndef CTXSEL_DEVICES_DEVICE_INFO_H_
#define CTXSEL_DEVICES_DEVICE_INFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ctxsel {

// What the agent's checks say of a device (ctxsel.v1.DeviceHealth).
enum class DeviceHealth { kHealthy, kDegraded, kUnhealthy };

// "healthy", "degraded", "unhealthy".
const char* DeviceHealthName(DeviceHealth health);
// The worse of the two.
DeviceHealth Worse(DeviceHealth a, DeviceHealth b);

struct DeviceInfo {
  // Unique within the fleet, e.g. "n1/gpu0". Assigned by AssignIds() unless
  // a devices file gives one.
  std::string id;
  std::string node;  // the node id the agent reports as
  // The OpenMP device number on its node: -1 for the host device (the CPU),
  // 0, 1, ... for the others in discovery order. Set by AssignIds().
  int index = 0;

  // The OpenMP `device` trait properties, named as in the selector language.
  std::vector<std::string> kind;       // "cpu", "host" / "gpu", "nohost"
  std::vector<std::string> arch;       // "x86_64", "nvptx64", "amdgcn", ...
  std::vector<std::string> isa;        // "avx512f", "x86_64_v4", "sm_90", ...
  std::vector<std::string> vendor;     // "intel", "amd", "nvidia"
  std::vector<std::string> extension;  // "cuda", "rocm", "level_zero"
  // SYCL architecture name: "x86_64", "amd_gpu_gfx90a".
  std::string sycl_architecture;

  // Identity a vendor runtime can pin (ctxsel.v1.Device documents each):
  // UUID as the runtime prints it, PCI bus id "0000:17:00.0", and the number
  // the device's own vendor runtime gives it (-1: AssignIds numbers it).
  std::string uuid;
  std::string pci_bus_id;
  int vendor_index = -1;

  std::string name;     // the product name, for people
  std::string backend;  // who found it: "cpu", "nvml", "kfd", "drm", "file"
  std::map<std::string, std::string> attributes;  // e.g. pci bus, family

  int64_t memory_bytes = 0;
  int compute_units = 0;     // cores / SMs / CUs / EUs
  int threads = 0;           // hardware threads (CPUs), 0 if not meaningful
  int numa_nodes = 0;        // CPUs only
  double utilisation = 0.0;  // 0..1 busy fraction; changes every heartbeat
  // How many claims may hold the device at once (0: the server's default,
  // 1); a devices file sets more for devices that jobs share.
  int claim_capacity = 0;

  // Health, with the reason when not healthy; a change is reported at the
  // next heartbeat (SameDeviceSet tells it apart).
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string health_reason;
  // The device this one is a partition of (a MIG instance's GPU): before
  // AssignIds the parent's id or UUID, after it the parent's id. Empty for a
  // whole device.
  std::string parent;

  // The kind its id numbers it under (sycl::IdKind): the smallest kind other
  // than "host", "nohost" and "any" ("cpu", "gpu"); "device" when none.
  std::string PrimaryKind() const;
  // True when `kind` has "host" (the CPU the agent runs on).
  bool IsHost() const;
};

// True when `a` and `b` describe the same devices, ignoring utilisation (which
// changes every heartbeat). Order matters: discovery is deterministic.
bool SameDeviceSet(const std::vector<DeviceInfo>& a,
                   const std::vector<DeviceInfo>& b);

// Sets `node` and `index` (device number) on every device, gives those
// without an id one of the form "<node>/<kind><n>", n counting per kind and
// skipping ids already taken ("<node>/cpu0", "<node>/gpu0", "<node>/gpu1"),
// numbers the devices without a vendor_index per vendor, as the server
// would (sycl::VendorIndices), and turns a `parent` given as a UUID into
// that device's id.
void AssignIds(const std::string& node, std::vector<DeviceInfo>& devices);

}  // namespace ctxsel

#endif  // CTXSEL_DEVICES_DEVICE_INFO_H_
