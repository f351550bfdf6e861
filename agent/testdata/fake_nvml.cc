// A stand-in for NVIDIA's libnvidia-ml.so.1 with three GPUs (compute
// capability 9.0, 8.0 and 10.0), so that the NVML backend's dlopen/dlsym path
// runs in tests on machines without a GPU. The environment variable
// FAKE_NVML_GPUS sets how many it reports (default 3), so a test can make one
// disappear.
//
// As the real library does for a full GPU's handle (all three are full GPUs,
// none a MIG device), nvmlDeviceGetAttributes_v2 answers NOT_SUPPORTED and
// nvmlDeviceGetNumGpuCores gives the CUDA cores: 132 SMs x 128 (H100 SXM),
// 108 x 64 (A100), 148 x 128 (B200). Built with -DFAKE_NVML_NO_GPU_CORES it
// stands for a driver from before nvmlDeviceGetNumGpuCores and lacks it;
// with -DFAKE_NVML_NO_MIG it lacks the MIG and health calls too.
//
// Health and MIG come from a state file a test edits while the agent runs:
// FAKE_NVML_STATE names it, and every call reads it again. One line each:
//   xid GPU CODE           an Xid event on GPU (delivered once per line)
//   retired_pending GPU    retired pages pending a reset
//   remap_failure GPU      a row-remapping failure
//   remap_pending GPU      row remapping pending a reset
//   ecc GPU COUNT          volatile uncorrected ECC errors
//   mig 0 COUNT            MIG mode enabled on the H100 (the one MIG-capable
//                          GPU here) with COUNT instances (at most 7)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {

struct nvmlDevice_st {
  int index;
  int mig;  // -1: the whole GPU; else the MIG instance's number
};
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
  char busId[32];
};

static nvmlDevice_st devices[3] = {{0, -1}, {1, -1}, {2, -1}};
static nvmlDevice_st mig_devices[3][7] = {
    {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}},
    {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6}},
    {{2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}, {2, 6}}};
static int initialised = 0;

}  // extern "C"

namespace {

struct GpuState {
  bool retired_pending = false, remap_failure = false, remap_pending = false;
  unsigned long long ecc = 0;
  unsigned int mig = 0;  // instances; 0: MIG mode off
};
struct State {
  GpuState gpu[3];
  int xids[64][2];  // (gpu, code), in file order
  int xid_count = 0;
};

State ReadState() {
  State state;
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (path == nullptr) return state;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what;
    int gpu = -1;
    words >> what >> gpu;
    if (gpu < 0 || gpu > 2) continue;
    GpuState& g = state.gpu[gpu];
    if (what == "xid" && state.xid_count < 64) {
      state.xids[state.xid_count][0] = gpu;
      words >> state.xids[state.xid_count][1];
      ++state.xid_count;
    } else if (what == "retired_pending") {
      g.retired_pending = true;
    } else if (what == "remap_failure") {
      g.remap_failure = true;
    } else if (what == "remap_pending") {
      g.remap_pending = true;
    } else if (what == "ecc") {
      words >> g.ecc;
    } else if (what == "mig") {
      words >> g.mig;
      if (g.mig > 7) g.mig = 7;
    }
  }
  return state;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  ++initialised;
  return 0;
}
int nvmlShutdown() {
  --initialised;
  return 0;
}
const char* nvmlErrorString(int rc) {
  return rc == 0 ? "Success" : "Fake error";
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (initialised <= 0) return 1;  // NVML_ERROR_UNINITIALIZED
  const char* env = std::getenv("FAKE_NVML_GPUS");
  *count = env != nullptr ? std::atoi(env) : 3;
  if (*count > 3) *count = 3;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_st** device) {
  if (i >= 3) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &devices[i];
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_st* d, char* name, unsigned int length) {
  static const char* names[3] = {"NVIDIA H100 80GB HBM3",
                                 "NVIDIA A100-SXM4-40GB", "NVIDIA B200"};
  if (d->mig >= 0) {
    std::snprintf(name, length, "%s MIG 1g.10gb", names[d->index]);
    return 0;
  }
  std::strncpy(name, names[d->index], length);
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_st* d, char* uuid, unsigned int length) {
  static const char* uuids[3] = {"GPU-0000", "GPU-1111", "GPU-2222"};
  if (d->mig >= 0) {
    std::snprintf(uuid, length, "MIG-%d%d%d%d-000%d", d->index, d->index,
                  d->index, d->index, d->mig);
    return 0;
  }
  std::strncpy(uuid, uuids[d->index], length);
  return 0;
}
// As NVML writes it: an 8-digit domain, upper-case hex.
int nvmlDeviceGetPciInfo_v3(nvmlDevice_st* d, nvmlPciInfo_t* pci) {
  static const char* bus_ids[3] = {"00000000:17:00.0", "00000000:2A:00.0",
                                   "00000001:C3:00.0"};
  std::memset(pci, 0, sizeof(*pci));
  std::strncpy(pci->busId, bus_ids[d->index], sizeof(pci->busId) - 1);
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_st* d, int* major,
                                       int* minor) {
  *major = d->index == 0 ? 9 : d->index == 1 ? 8 : 10;
  *minor = 0;
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_st* d, nvmlMemory_t* memory) {
  memory->total = d->mig >= 0     ? 10ull << 30
                  : d->index == 0 ? 85520809984ull
                                  : 42505273344ull;
  memory->free = memory->total;
  memory->used = 0;
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_st* d, nvmlUtilization_t* u) {
  if (d->mig >= 0) return 3;  // NOT_SUPPORTED on MIG devices, as NVML
  u->gpu = d->index == 0 ? 75 : 0;
  u->memory = 10;
  return 0;
}
// "This API currently only supports MIG device handles" (NVML's reference):
// NVML_ERROR_NOT_SUPPORTED for a full GPU. A fake MIG instance is a 1g.10gb
// slice: 16 SMs, 10 GiB.
int nvmlDeviceGetAttributes_v2(nvmlDevice_st* d, nvmlDeviceAttributes_t* a) {
  if (d->mig < 0) return 3;  // NVML_ERROR_NOT_SUPPORTED
  std::memset(a, 0, sizeof(*a));
  a->multiprocessorCount = 16;
  a->gpuInstanceSliceCount = 1;
  a->computeInstanceSliceCount = 1;
  a->memorySizeMB = 10240;
  return 0;
}

#ifndef FAKE_NVML_NO_MIG
// Only the H100 (GPU 0) is MIG-capable here: the others answer
// NOT_SUPPORTED, as a GPU without MIG does.
int nvmlDeviceGetMigMode(nvmlDevice_st* d, unsigned int* current,
                         unsigned int* pending) {
  if (d->mig >= 0) return 2;
  if (d->index != 0) return 3;
  *current = *pending = ReadState().gpu[d->index].mig > 0 ? 1 : 0;
  return 0;
}
int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_st* d, unsigned int* count) {
  if (d->mig >= 0) return 2;
  *count = 7;
  return 0;
}
int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_st* d, unsigned int i,
                                        nvmlDevice_st** mig) {
  if (d->mig >= 0 || i >= 7) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  if (i >= ReadState().gpu[d->index].mig) return 6;  // NVML_ERROR_NOT_FOUND
  *mig = &mig_devices[d->index][i];
  return 0;
}

// Health. An event set is a cursor into the state file's xid lines.
struct nvmlEventSet_st {
  int delivered;
  unsigned long long registered[3];
};
struct nvmlEventData_t {
  nvmlDevice_st* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};
int nvmlEventSetCreate(nvmlEventSet_st** set) {
  *set = new nvmlEventSet_st{ReadState().xid_count, {0, 0, 0}};
  return 0;
}
int nvmlEventSetFree(nvmlEventSet_st* set) {
  delete set;
  return 0;
}
int nvmlDeviceRegisterEvents(nvmlDevice_st* d, unsigned long long types,
                             nvmlEventSet_st* set) {
  if (d->mig >= 0) return 3;
  set->registered[d->index] |= types;
  return 0;
}
int nvmlEventSetWait_v2(nvmlEventSet_st* set, nvmlEventData_t* data,
                        unsigned int) {
  const State state = ReadState();
  while (set->delivered < state.xid_count) {
    const int* xid = state.xids[set->delivered++];
    if ((set->registered[xid[0]] & 0x8) == 0) continue;  // XidCriticalError
    std::memset(data, 0, sizeof(*data));
    data->device = &devices[xid[0]];
    data->eventType = 0x8;
    data->eventData = static_cast<unsigned long long>(xid[1]);
    return 0;
  }
  return 10;  // NVML_ERROR_TIMEOUT
}
int nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_st* d, int* pending) {
  if (d->mig >= 0) return 3;
  *pending = ReadState().gpu[d->index].retired_pending ? 1 : 0;
  return 0;
}
int nvmlDeviceGetRemappedRows(nvmlDevice_st* d, unsigned int* corrected,
                              unsigned int* uncorrected, unsigned int* pending,
                              unsigned int* failure) {
  if (d->mig >= 0) return 3;
  const GpuState g = ReadState().gpu[d->index];
  *corrected = 0;
  *uncorrected = g.remap_failure || g.remap_pending ? 1 : 0;
  *pending = g.remap_pending ? 1 : 0;
  *failure = g.remap_failure ? 1 : 0;
  return 0;
}
// Only (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC) is kept.
int nvmlDeviceGetTotalEccErrors(nvmlDevice_st* d, int type, int counter,
                                unsigned long long* count) {
  if (d->mig >= 0) return 3;
  *count = type == 1 && counter == 0 ? ReadState().gpu[d->index].ecc : 0;
  return 0;
}
#endif  // FAKE_NVML_NO_MIG
#ifndef FAKE_NVML_NO_GPU_CORES
int nvmlDeviceGetNumGpuCores(nvmlDevice_st* d, unsigned int* cores) {
  static const unsigned int counts[3] = {132 * 128, 108 * 64, 148 * 128};
  *cores = counts[d->index];
  return 0;
}
#endif

}  // extern "C"
