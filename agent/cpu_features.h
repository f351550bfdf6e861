// CPU identification through the cpuid instruction and the kernel's flags.
//
// DecodeCpu() turns raw cpuid/xgetbv answers into what a context selector can
// test: the vendor (as an OpenMP `vendor` property), family/model, the ISA
// features from cpu_features.def that the processor has, the OS has enabled
// the register state for *and* the kernel lists among its flags, and the
// x86-64 micro-architecture level. The kernel is the authority on what is
// safe to use: it clears features with errata (RDSEED on Zen 5) and those
// masked with clearcpuid=, while cpuid still reports them. Where the kernel
// publishes no flags (no /proc/cpuinfo), cpuid and XCR0 alone decide.
// ReadCpu() does all this for the processor it runs on.
//
//   ctxsel::agent::CpuInfo cpu = ctxsel::agent::ReadCpu("/proc/cpuinfo");
//   if (cpu.HasIsa("avx512f")) { ... }
//   std::string level = cpu.LevelName();  // "x86_64_v4"
#ifndef CTXSEL_AGENT_CPU_FEATURES_H_
#define CTXSEL_AGENT_CPU_FEATURES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
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

// CPU flags as the kernel spells them in /proc/cpuinfo ("pni", "sha_ni").
using KernelCpuFlags = std::set<std::string>;

// The flags every processor in `cpuinfo` (the text of /proc/cpuinfo) has: the
// intersection of its "flags" lines. nullopt when there is no such line (not
// an x86 kernel), so that callers fall back to cpuid alone.
std::optional<KernelCpuFlags> ParseCpuinfoFlags(absl::string_view cpuinfo);

// ParseCpuinfoFlags() of the file at `path`; nullopt when it cannot be read.
std::optional<KernelCpuFlags> ReadCpuinfoFlags(const std::string& path);

// Decodes the answers of `source`. With `kernel_flags`, a feature is reported
// only when the kernel also lists it (under its cpu_features.def spelling).
CpuInfo DecodeCpu(const CpuidSource& source,
                  const std::optional<KernelCpuFlags>& kernel_flags);

// cpuid and XCR0 of the processor this code runs on (all zero off x86).
CpuidSource HostCpuid();

// Decodes the processor this code runs on, agreeing with the kernel's flags
// in `proc_cpuinfo` when that file is readable (empty CpuInfo off x86-64).
CpuInfo ReadCpu(const std::string& proc_cpuinfo);

// The highest x86-64 level whose every feature is in `isas` (0 when even the
// baseline is missing).
int MicroArchLevel(absl::Span<const std::string> isas);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_CPU_FEATURES_H_
