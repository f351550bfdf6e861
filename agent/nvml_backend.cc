#include "agent/nvml_backend.h"

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "devices/arch_traits.h"
#include "spdlog/spdlog.h"

namespace ctxsel::agent {
namespace {

// The few NVML declarations we need (from NVIDIA's public nvml.h ABI).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
      sharedEncoderCount, sharedJpegCount, sharedOfaCount,
      gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];  // "00000000:17:00.0"
};
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;
constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
constexpr int NVML_VOLATILE_ECC = 0;

// NVML entry points, resolved with dlsym.
struct NvmlApi {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*count)(unsigned int*);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*capability)(nvmlDevice_t, int*, int*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  // MIG device handles only: a full GPU's handle gets NOT_SUPPORTED.
  nvmlReturn_t (*attributes)(nvmlDevice_t, nvmlDeviceAttributes_t*);  // opt.
  // CUDA cores; drivers before it lack the symbol.
  nvmlReturn_t (*gpu_cores)(nvmlDevice_t, unsigned int*);  // optional
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*);  // optional
  // MIG (R450 on); optional, like everything below.
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int*, unsigned int*);
  nvmlReturn_t (*max_mig_count)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*mig_handle)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
  // Health.
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*);
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t);
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long,
                                  nvmlEventSet_t);
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t*,
                                 unsigned int);
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, int*);
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned int*, unsigned int*,
                                unsigned int*, unsigned int*);
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*);
};

// NVML writes the PCI domain with 8 hex digits ("00000000:17:00.0"); sysfs,
// the other backends and the API use 4 ("0000:17:00.0"), lower case.
std::string PciBusId(const char* nvml_bus_id) {
  std::string id = absl::AsciiStrToLower(
      absl::string_view(nvml_bus_id, strnlen(nvml_bus_id, 32)));
  const size_t colon = id.find(':');
  if (colon == 8 && absl::StartsWith(id, "0000")) id.erase(0, 4);
  return id;
}

// CUDA cores per SM of compute capability major.minor; 0 if not known.
int CoresPerSm(int major, int minor) {
  struct Row {
    int major, minor, cores_per_sm;
  };
  static constexpr Row kRows[] = {
#define NVIDIA_SM(major, minor, cores_per_sm, architecture) \
  {major, minor, cores_per_sm},
#include "agent/nvidia_cores_per_sm.def"
#undef NVIDIA_SM
  };
  for (const Row& row : kRows) {
    if (row.major == major && row.minor == minor) return row.cores_per_sm;
  }
  return 0;
}

template <typename Fn>
bool Resolve(void* lib, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  return fn != nullptr;
}

bool ResolveAll(void* lib, NvmlApi& api) {
  Resolve(lib, "nvmlDeviceGetAttributes_v2", api.attributes);  // optional
  Resolve(lib, "nvmlDeviceGetPciInfo_v3", api.pci_info);       // optional
  Resolve(lib, "nvmlDeviceGetNumGpuCores", api.gpu_cores);     // optional
  // A driver without MIG or these health calls still works: each is checked
  // for null where it is used.
  Resolve(lib, "nvmlDeviceGetMigMode", api.mig_mode);
  Resolve(lib, "nvmlDeviceGetMaxMigDeviceCount", api.max_mig_count);
  Resolve(lib, "nvmlDeviceGetMigDeviceHandleByIndex", api.mig_handle);
  Resolve(lib, "nvmlEventSetCreate", api.event_set_create);
  Resolve(lib, "nvmlEventSetFree", api.event_set_free);
  Resolve(lib, "nvmlDeviceRegisterEvents", api.register_events);
  Resolve(lib, "nvmlEventSetWait_v2", api.event_set_wait);
  Resolve(lib, "nvmlDeviceGetRetiredPagesPendingStatus", api.retired_pending);
  Resolve(lib, "nvmlDeviceGetRemappedRows", api.remapped_rows);
  Resolve(lib, "nvmlDeviceGetTotalEccErrors", api.ecc_errors);
  return Resolve(lib, "nvmlInit_v2", api.init) &&
         Resolve(lib, "nvmlShutdown", api.shutdown) &&
         Resolve(lib, "nvmlErrorString", api.error_string) &&
         Resolve(lib, "nvmlDeviceGetCount_v2", api.count) &&
         Resolve(lib, "nvmlDeviceGetHandleByIndex_v2", api.handle) &&
         Resolve(lib, "nvmlDeviceGetName", api.name) &&
         Resolve(lib, "nvmlDeviceGetUUID", api.uuid) &&
         Resolve(lib, "nvmlDeviceGetCudaComputeCapability", api.capability) &&
         Resolve(lib, "nvmlDeviceGetMemoryInfo", api.memory) &&
         Resolve(lib, "nvmlDeviceGetUtilizationRates", api.utilization);
}

// Xids that an application causes (NVIDIA's k8s device plugin skips the
// same): the GPU itself is fine.
bool ApplicationXid(unsigned long long xid) {
  switch (xid) {
    case 13:   // graphics engine exception
    case 31:   // GPU memory page fault
    case 43:   // GPU stopped processing
    case 45:   // preemptive cleanup
    case 68:   // video processor exception
    case 109:  // context switch timeout
      return true;
    default:
      return false;
  }
}

class NvmlBackend : public DiscoveryBackend {
 public:
  explicit NvmlBackend(NvmlOptions options) : options_(std::move(options)) {
    const std::string& library = options_.library;
    lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) {
      spdlog::debug("nvml: {} not loaded: {}", library, dlerror());
      return;
    }
    if (!ResolveAll(lib_, api_)) {
      spdlog::warn("nvml: {} lacks an NVML entry point", library);
      return;
    }
    nvmlReturn_t rc = api_.init();
    if (rc != NVML_SUCCESS) {
      spdlog::warn("nvml: nvmlInit failed: {}", api_.error_string(rc));
      return;
    }
    ready_ = true;
    if (api_.event_set_create != nullptr && api_.event_set_wait != nullptr &&
        api_.register_events != nullptr &&
        api_.event_set_create(&events_) != NVML_SUCCESS) {
      events_ = nullptr;
    }
  }

  ~NvmlBackend() override {
    if (events_ != nullptr && api_.event_set_free != nullptr) {
      api_.event_set_free(events_);
    }
    if (ready_) api_.shutdown();
    if (lib_ != nullptr) dlclose(lib_);
  }

  std::string name() const override { return "nvml"; }

  absl::StatusOr<std::vector<DeviceInfo>> Discover() override {
    std::vector<DeviceInfo> devices;
    if (!ready_) return devices;
    unsigned int count = 0;
    if (nvmlReturn_t rc = api_.count(&count); rc != NVML_SUCCESS) {
      return Error("nvmlDeviceGetCount", rc);
    }
    std::vector<nvmlDevice_t> handles;
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t device = nullptr;
      if (nvmlReturn_t rc = api_.handle(i, &device); rc != NVML_SUCCESS) {
        return Error(absl::StrCat("nvmlDeviceGetHandleByIndex(", i, ")"), rc);
      }
      handles.push_back(device);
    }
    ReadXids(handles);
    for (unsigned int i = 0; i < count; ++i) {
      CTXSEL_ASSIGN_OR_RETURN(DeviceInfo d, Describe(handles[i]));
      // NVML counts in PCI bus order, as CUDA does with
      // CUDA_DEVICE_ORDER=PCI_BUS_ID.
      d.vendor_index = static_cast<int>(i);
      CheckHealth(handles[i], d);
      std::vector<DeviceInfo> instances = MigDevices(handles[i], d);
      devices.push_back(std::move(d));
      for (DeviceInfo& m : instances) devices.push_back(std::move(m));
    }
    return devices;
  }

 private:
  // Registers new GPUs for critical Xid events and reads the events that
  // came since the last call (without waiting).
  void ReadXids(const std::vector<nvmlDevice_t>& handles) {
    if (events_ == nullptr) return;
    for (nvmlDevice_t device : handles) {
      if (!registered_.insert(device).second) continue;
      if (nvmlReturn_t rc = api_.register_events(
              device, nvmlEventTypeXidCriticalError, events_);
          rc != NVML_SUCCESS) {
        spdlog::debug("nvml: no Xid events: {}", api_.error_string(rc));
      }
    }
    nvmlEventData_t event{};
    while (api_.event_set_wait(events_, &event, 0) == NVML_SUCCESS) {
      if (event.eventType != nvmlEventTypeXidCriticalError ||
          ApplicationXid(event.eventData)) {
        continue;
      }
      spdlog::warn("nvml: Xid {} on a GPU", event.eventData);
      xids_[event.device] = {event.eventData, options_.now()};
    }
  }

  // Health from the last critical Xid (for --xid_hold), row remapping,
  // retired pages and volatile uncorrected ECC errors; each check whose
  // call the driver lacks or refuses is skipped.
  void CheckHealth(nvmlDevice_t device, DeviceInfo& d) const {
    auto worse = [&d](DeviceHealth health, std::string reason) {
      if (static_cast<int>(health) <= static_cast<int>(d.health)) return;
      d.health = health;
      d.health_reason = std::move(reason);
    };
    if (auto it = xids_.find(device);
        it != xids_.end() &&
        options_.now() - it->second.second < options_.xid_hold) {
      worse(DeviceHealth::kUnhealthy,
            absl::StrCat("Xid ", it->second.first, " at ",
                         absl::FormatTime("%H:%M:%S", it->second.second,
                                          absl::UTCTimeZone()),
                         " UTC"));
    }
    unsigned int corrected = 0, uncorrected = 0, pending = 0, failure = 0;
    if (api_.remapped_rows != nullptr &&
        api_.remapped_rows(device, &corrected, &uncorrected, &pending,
                           &failure) == NVML_SUCCESS) {
      if (failure != 0) {
        worse(DeviceHealth::kUnhealthy, "row remapping failed");
      } else if (pending != 0) {
        worse(DeviceHealth::kDegraded, "row remapping pending a GPU reset");
      }
    }
    int retired_pending = 0;
    if (api_.retired_pending != nullptr &&
        api_.retired_pending(device, &retired_pending) == NVML_SUCCESS) {
      d.attributes["retired_pages_pending"] = retired_pending ? "yes" : "no";
      if (retired_pending != 0) {
        worse(DeviceHealth::kDegraded, "retired pages pending a GPU reset");
      }
    }
    unsigned long long ecc = 0;
    if (api_.ecc_errors != nullptr &&
        api_.ecc_errors(device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                        NVML_VOLATILE_ECC, &ecc) == NVML_SUCCESS) {
      d.attributes["ecc_uncorrected_volatile"] = absl::StrCat(ecc);
      if (ecc > 0) {
        worse(DeviceHealth::kDegraded,
              absl::StrCat(ecc, " volatile uncorrected ECC errors"));
      }
    }
  }

  // The MIG instances of `gpu` (described by `parent`) when MIG mode is
  // on, each a device with its own UUID ("MIG-..."), memory and SMs, the
  // parent's traits and health, and `parent` set to the GPU's UUID
  // (AssignIds makes it the GPU's id). Sets parent's "mig_mode" attribute.
  std::vector<DeviceInfo> MigDevices(nvmlDevice_t gpu,
                                     DeviceInfo& parent) const {
    std::vector<DeviceInfo> out;
    unsigned int current = 0, pending = 0, max = 0;
    if (api_.mig_mode == nullptr ||
        api_.mig_mode(gpu, &current, &pending) != NVML_SUCCESS) {
      return out;  // no MIG on this GPU or driver
    }
    const bool enabled = current == NVML_DEVICE_MIG_ENABLE;
    parent.attributes["mig_mode"] = enabled ? "enabled" : "disabled";
    if (!enabled || api_.max_mig_count == nullptr ||
        api_.mig_handle == nullptr ||
        api_.max_mig_count(gpu, &max) != NVML_SUCCESS) {
      return out;
    }
    for (unsigned int i = 0; i < max; ++i) {
      nvmlDevice_t mig = nullptr;
      nvmlReturn_t rc = api_.mig_handle(gpu, i, &mig);
      if (rc == NVML_ERROR_NOT_FOUND) continue;  // an unused slot
      if (rc != NVML_SUCCESS) {
        spdlog::debug("nvml: nvmlDeviceGetMigDeviceHandleByIndex({}): {}", i,
                      api_.error_string(rc));
        continue;
      }
      DeviceInfo d = parent;
      d.attributes.erase("mig_mode");
      d.attributes["mig_index"] = absl::StrCat(i);
      d.utilisation = 0;  // NVML has no utilisation for a MIG device
      d.uuid.clear();
      char text[96] = {};
      if (api_.name(mig, text, sizeof(text)) == NVML_SUCCESS) d.name = text;
      if (api_.uuid(mig, text, sizeof(text)) == NVML_SUCCESS) d.uuid = text;
      d.attributes["uuid"] = d.uuid;
      if (d.uuid.empty()) continue;  // nothing a runtime could pin
      nvmlMemory_t memory{};
      d.memory_bytes = api_.memory(mig, &memory) == NVML_SUCCESS
                           ? static_cast<int64_t>(memory.total)
                           : 0;
      nvmlDeviceAttributes_t attributes{};
      d.compute_units =
          api_.attributes != nullptr &&
                  api_.attributes(mig, &attributes) == NVML_SUCCESS
              ? static_cast<int>(attributes.multiprocessorCount)
              : 0;
      d.parent = parent.uuid;
      out.push_back(std::move(d));
    }
    return out;
  }

  absl::Status Error(const std::string& call, nvmlReturn_t rc) const {
    return absl::InternalError(
        absl::StrCat("nvml: ", call, " failed: ", api_.error_string(rc)));
  }

  absl::StatusOr<DeviceInfo> Describe(nvmlDevice_t device) const {
    DeviceInfo d;
    d.backend = name();
    int major = 0, minor = 0;
    if (nvmlReturn_t rc = api_.capability(device, &major, &minor);
        rc != NVML_SUCCESS) {
      return Error("nvmlDeviceGetCudaComputeCapability", rc);
    }
    std::string sm = absl::StrCat("sm_", major, minor);
    d.sycl_architecture = "nvidia_gpu_" + sm;
    if (!ApplyArchTraits(d).ok()) ApplyUnknownGpuTraits(d, "nvidia", sm);
    d.attributes["compute_capability"] = absl::StrCat(major, ".", minor);
    char text[96] = {};
    if (api_.name(device, text, sizeof(text)) == NVML_SUCCESS) d.name = text;
    if (api_.uuid(device, text, sizeof(text)) == NVML_SUCCESS) {
      d.attributes["uuid"] = text;
      d.uuid = text;
    }
    nvmlMemory_t memory{};
    if (api_.memory(device, &memory) == NVML_SUCCESS) {
      d.memory_bytes = static_cast<int64_t>(memory.total);
    }
    nvmlUtilization_t busy{};
    if (api_.utilization(device, &busy) == NVML_SUCCESS) {
      d.utilisation = busy.gpu / 100.0;
    }
    nvmlPciInfo_t pci{};
    if (api_.pci_info != nullptr &&
        api_.pci_info(device, &pci) == NVML_SUCCESS) {
      d.pci_bus_id = PciBusId(pci.busId);
    }
    d.compute_units = SmCount(device, major, minor);
    return d;
  }

  // The SMs of `device`: nvmlDeviceGetAttributes_v2's count where it answers
  // (MIG device handles), else CUDA cores over cores per SM (a full GPU);
  // 0 when neither can tell.
  int SmCount(nvmlDevice_t device, int major, int minor) const {
    nvmlDeviceAttributes_t attributes{};
    if (api_.attributes != nullptr &&
        api_.attributes(device, &attributes) == NVML_SUCCESS &&
        attributes.multiprocessorCount > 0) {
      return static_cast<int>(attributes.multiprocessorCount);
    }
    unsigned int cores = 0;
    if (api_.gpu_cores == nullptr) {
      spdlog::debug("nvml: no nvmlDeviceGetNumGpuCores: SM count unknown");
      return 0;
    }
    if (nvmlReturn_t rc = api_.gpu_cores(device, &cores); rc != NVML_SUCCESS) {
      spdlog::debug("nvml: nvmlDeviceGetNumGpuCores failed: {}",
                    api_.error_string(rc));
      return 0;
    }
    const int per_sm = CoresPerSm(major, minor);
    if (per_sm == 0) {
      spdlog::debug(
          "nvml: compute capability {}.{} is not in nvidia_cores_per_sm.def: "
          "SM count unknown",
          major, minor);
      return 0;
    }
    if (cores == 0 || cores % per_sm != 0) {
      spdlog::debug("nvml: {} CUDA cores is no whole number of SMs of {} cores",
                    cores, per_sm);
      return 0;
    }
    return static_cast<int>(cores / per_sm);
  }

  const NvmlOptions options_;
  void* lib_ = nullptr;
  NvmlApi api_{};
  bool ready_ = false;
  nvmlEventSet_t events_ = nullptr;  // null: no Xid events
  absl::flat_hash_set<nvmlDevice_t> registered_;
  // The last critical Xid of each GPU, and when it came.
  absl::flat_hash_map<nvmlDevice_t, std::pair<unsigned long long, absl::Time>>
      xids_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(NvmlOptions options) {
  return std::make_unique<NvmlBackend>(std::move(options));
}

std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(std::string library) {
  NvmlOptions options;
  options.library = std::move(library);
  return MakeNvmlBackend(std::move(options));
}

}  // namespace ctxsel::agent
