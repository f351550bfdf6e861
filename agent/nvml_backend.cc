#include "agent/nvml_backend.h"

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

class NvmlBackend : public DiscoveryBackend {
 public:
  explicit NvmlBackend(const std::string& library) {
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
  }

  ~NvmlBackend() override {
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
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t device = nullptr;
      if (nvmlReturn_t rc = api_.handle(i, &device); rc != NVML_SUCCESS) {
        return Error(absl::StrCat("nvmlDeviceGetHandleByIndex(", i, ")"), rc);
      }
      CTXSEL_ASSIGN_OR_RETURN(DeviceInfo d, Describe(device));
      // NVML counts in PCI bus order, as CUDA does with
      // CUDA_DEVICE_ORDER=PCI_BUS_ID.
      d.vendor_index = static_cast<int>(i);
      devices.push_back(std::move(d));
    }
    return devices;
  }

 private:
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

  void* lib_ = nullptr;
  NvmlApi api_{};
  bool ready_ = false;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(std::string library) {
  return std::make_unique<NvmlBackend>(library);
}

}  // namespace ctxsel::agent
