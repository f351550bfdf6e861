// The node's CPU as one device: cpuid (agreeing with the kernel's flags in
// /proc/cpuinfo) for vendor, model and ISA features, hwloc for cores,
// hardware threads, NUMA nodes, packages and memory, and /proc/stat for
// utilisation.
//
//   auto cpu = MakeCpuBackend("/proc/stat", "/proc/cpuinfo");
//   absl::StatusOr<std::vector<DeviceInfo>> devices = cpu->Discover();
//   // one device: kind {cpu, host}, sycl_architecture "x86_64",
//   // isa {"sse2", ..., "avx512f", "x86_64_v2", "x86_64_v3", "x86_64_v4"}
#ifndef CTXSEL_AGENT_CPU_BACKEND_H_
#define CTXSEL_AGENT_CPU_BACKEND_H_

#include <memory>
#include <string>

#include "agent/backend.h"
#include "agent/cpu_features.h"

namespace ctxsel::agent {

// `proc_stat` is the file CPU utilisation is sampled from; utilisation is the
// busy fraction since the previous Discover() (the first call: since the
// backend was made).
// `proc_cpuinfo` is where the kernel's CPU flags are read (see ReadCpu()).
std::unique_ptr<DiscoveryBackend> MakeCpuBackend(std::string proc_stat,
                                                 std::string proc_cpuinfo);

// The device for `cpu` with the topology given (no I/O; for tests).
struct CpuTopology {
  int packages = 0;
  int cores = 0;
  int threads = 0;
  int numa_nodes = 0;
  int64_t memory_bytes = 0;
};
DeviceInfo DescribeCpu(const CpuInfo& cpu, const CpuTopology& topology);

// Busy fraction between two /proc/stat "cpu" lines (0 if none elapsed).
double CpuBusyFraction(const std::string& before, const std::string& after);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_CPU_BACKEND_H_
