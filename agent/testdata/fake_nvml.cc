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
// stands for a driver from before nvmlDeviceGetNumGpuCores and lacks it.
#include <cstdlib>
#include <cstring>

extern "C" {

struct nvmlDevice_st {
  int index;
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

static nvmlDevice_st devices[3] = {{0}, {1}, {2}};
static int initialised = 0;

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
  std::strncpy(name, names[d->index], length);
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_st* d, char* uuid, unsigned int length) {
  static const char* uuids[3] = {"GPU-0000", "GPU-1111", "GPU-2222"};
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
  memory->total = d->index == 0 ? 85520809984ull : 42505273344ull;
  memory->free = memory->total;
  memory->used = 0;
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_st* d, nvmlUtilization_t* u) {
  u->gpu = d->index == 0 ? 75 : 0;
  u->memory = 10;
  return 0;
}
// "This API currently only supports MIG device handles" (NVML's reference):
// NVML_ERROR_NOT_SUPPORTED for a full GPU.
int nvmlDeviceGetAttributes_v2(nvmlDevice_st*, nvmlDeviceAttributes_t*) {
  return 3;  // NVML_ERROR_NOT_SUPPORTED
}
#ifndef FAKE_NVML_NO_GPU_CORES
int nvmlDeviceGetNumGpuCores(nvmlDevice_st* d, unsigned int* cores) {
  static const unsigned int counts[3] = {132 * 128, 108 * 64, 148 * 128};
  *cores = counts[d->index];
  return 0;
}
#endif

}  // extern "C"
