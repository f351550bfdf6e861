// CPU identification through the cpuid instruction.
//
// DecodeCpu() turns raw cpuid/xgetbv answers into what a context selector can
// test: the vendor (as an OpenMP `vendor` property), family/model, the ISA
// features from cpu_features.def that the processor has *and* the OS has
// enabled, and the x86-64 micro-architecture level. ReadCpu() does the same
// for the processor it runs on.
//
//   ctxsel::agent::CpuInfo cpu = ctxsel::agent::ReadCpu();
//   if (cpu.HasIsa("avx512f")) { ... }
//   std::string level = cpu.LevelName();  // "x86_64_v4"
#ifndef CTXSEL_AGENT_CPU_FEATURES_H_
#define CTXSEL_AGENT_CPU_FEATURES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace ctxsel::agent {

// One row of cpu_features.def, for callers that need the whole vocabulary.
struct CpuFeatureInfo {
  const char* isa;      // `isa` property name, e.g. "sse3"
  const char* cpuinfo;  // spelling in /proc/cpuinfo, e.g. "pni"
  int level;            // x86-64 level that requires it (1-4), or 0
};

// Every feature in cpu_features.def, in table order.
absl::Span<const CpuFeatureInfo> AllCpuFeatures();

// The four registers one cpuid query returns.
struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// Where DecodeCpu() gets its answers: cpuid(leaf, subleaf) and XCR0 (the OS's
// enabled register state; 0 when the OS does not enable XSAVE).
struct CpuidSource {
  std::function<CpuidRegs(uint32_t leaf, uint32_t subleaf)> cpuid;
  uint64_t xcr0 = 0;
};

// What DecodeCpu() found.
struct CpuInfo {
  std::string vendor_id;  // raw cpuid vendor, e.g. "GenuineIntel"
  std::string vendor;     // OpenMP vendor property: "intel", "amd", "unknown"
  std::string brand;      // e.g. "Intel(R) Xeon(R) Platinum 8480+"
  int family = 0;         // display family (base + extended)
  int model = 0;          // display model (base + extended)
  int stepping = 0;
  std::vector<std::string> isas;  // usable features, cpu_features.def order
  int level = 0;                  // x86-64 micro-architecture level, 0-4

  bool HasIsa(const std::string& isa) const;
  // "x86_64_v2" .. "x86_64_v4", or "x86_64" for level 1, "" for level 0.
  std::string LevelName() const;
};

// Decodes the answers of `source`.
CpuInfo DecodeCpu(const CpuidSource& source);

// Decodes the processor this code runs on (empty CpuInfo off x86-64).
CpuInfo ReadCpu();

// The highest x86-64 level whose every feature is in `isas` (0 when even the
// baseline is missing).
int MicroArchLevel(absl::Span<const std::string> isas);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_CPU_FEATURES_H_
