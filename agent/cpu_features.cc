#include "agent/cpu_features.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ctxsel::agent {
namespace {

enum Reg { EAX, EBX, ECX, EDX };

// XCR0 bits the OS must set before a class of registers may be used.
enum State : uint64_t {
  kNone = 0,
  kAvx = 0x6,      // SSE + AVX (YMM) state
  kAvx512 = 0xe6,  // + opmask, ZMM_Hi256, Hi16_ZMM
  kAmx = 0x60000,  // XTILECFG + XTILEDATA
};

struct FeatureRow {
  CpuFeatureInfo info;
  uint32_t leaf;
  uint32_t subleaf;
  Reg reg;
  int bit;
  uint64_t state;
};

constexpr FeatureRow kFeatures[] = {
#define CPU_FEATURE(isa, cpuinfo, leaf, subleaf, reg, bit, state, level) \
  {{#isa, cpuinfo, level}, leaf, subleaf, reg, bit, state},
#include "agent/cpu_features.def"
#undef CPU_FEATURE
};

constexpr CpuFeatureInfo kInfos[] = {
#define CPU_FEATURE(isa, cpuinfo, leaf, subleaf, reg, bit, state, level) \
  {#isa, cpuinfo, level},
#include "agent/cpu_features.def"
#undef CPU_FEATURE
};

uint32_t Pick(const CpuidRegs& regs, Reg reg) {
  switch (reg) {
    case EAX:
      return regs.eax;
    case EBX:
      return regs.ebx;
    case ECX:
      return regs.ecx;
    case EDX:
      return regs.edx;
  }
  return 0;
}

std::string VendorProperty(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "intel";
  if (vendor_id == "AuthenticAMD" || vendor_id == "HygonGenuine") return "amd";
  return "unknown";
}

std::string Brand(const CpuidSource& source, uint32_t max_ext) {
  if (max_ext < 0x80000004) return "";
  char text[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    CpuidRegs r = source.cpuid(0x80000002 + i, 0);
    uint32_t words[4] = {r.eax, r.ebx, r.ecx, r.edx};
    std::memcpy(text + 16 * i, words, 16);
  }
  std::string brand(text);
  brand.erase(0, brand.find_first_not_of(' '));
  brand.erase(brand.find_last_not_of(' ') + 1);
  return brand;
}

// Whether cpuid can answer `leaf`/`subleaf` at all on this processor.
bool LeafExists(uint32_t leaf, uint32_t subleaf, uint32_t max_basic,
                uint32_t max_ext, uint32_t max_leaf7_subleaf) {
  if (leaf >= 0x80000000) return leaf <= max_ext;
  if (leaf > max_basic) return false;
  return leaf != 0x7 || subleaf <= max_leaf7_subleaf;
}

}  // namespace

absl::Span<const CpuFeatureInfo> AllCpuFeatures() { return kInfos; }

bool CpuInfo::HasIsa(const std::string& isa) const {
  return std::find(isas.begin(), isas.end(), isa) != isas.end();
}

std::string CpuInfo::LevelName() const {
  if (level <= 0) return "";
  if (level == 1) return "x86_64";
  return "x86_64_v" + std::to_string(level);
}

int MicroArchLevel(absl::Span<const std::string> isas) {
  int level = 4;
  for (const CpuFeatureInfo& f : kInfos) {
    if (f.level == 0 || f.level > level) continue;
    if (std::find(isas.begin(), isas.end(), f.isa) == isas.end()) {
      level = f.level - 1;
    }
  }
  return level;
}

std::optional<KernelCpuFlags> ParseCpuinfoFlags(absl::string_view cpuinfo) {
  std::optional<KernelCpuFlags> common;
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    // "flags\t\t: fpu vme ..."; other keys ("vmx flags", "bugs") differ.
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos ||
        absl::StripAsciiWhitespace(line.substr(0, colon)) != "flags") {
      continue;
    }
    KernelCpuFlags flags;
    for (absl::string_view flag :
         absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipWhitespace())) {
      flags.emplace(absl::StripAsciiWhitespace(flag));
    }
    if (!common.has_value()) {
      common = std::move(flags);
      continue;
    }
    // A feature is safe only if every processor the agent's users may be
    // scheduled on has it.
    KernelCpuFlags both;
    std::set_intersection(common->begin(), common->end(), flags.begin(),
                          flags.end(), std::inserter(both, both.end()));
    common = std::move(both);
  }
  return common;
}

std::optional<KernelCpuFlags> ReadCpuinfoFlags(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCpuinfoFlags(text.str());
}

CpuInfo DecodeCpu(const CpuidSource& source,
                  const std::optional<KernelCpuFlags>& kernel_flags) {
  CpuInfo cpu;
  CpuidRegs leaf0 = source.cpuid(0, 0);
  uint32_t max_basic = leaf0.eax;
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  cpu.vendor_id = vendor;
  cpu.vendor = VendorProperty(cpu.vendor_id);
  uint32_t max_ext = source.cpuid(0x80000000, 0).eax;
  if (max_ext < 0x80000000) max_ext = 0;
  cpu.brand = Brand(source, max_ext);

  if (max_basic >= 1) {
    uint32_t sig = source.cpuid(1, 0).eax;
    int base_family = (sig >> 8) & 0xf;
    int base_model = (sig >> 4) & 0xf;
    cpu.stepping = sig & 0xf;
    cpu.family =
        base_family == 0xf ? base_family + ((sig >> 20) & 0xff) : base_family;
    cpu.model = (base_family == 0x6 || base_family == 0xf)
                    ? base_model + (((sig >> 16) & 0xf) << 4)
                    : base_model;
  }
  uint32_t max_leaf7_subleaf = max_basic >= 7 ? source.cpuid(7, 0).eax : 0;
  for (const FeatureRow& row : kFeatures) {
    if (!LeafExists(row.leaf, row.subleaf, max_basic, max_ext,
                    max_leaf7_subleaf)) {
      continue;
    }
    uint32_t value = Pick(source.cpuid(row.leaf, row.subleaf), row.reg);
    if (((value >> row.bit) & 1) == 0) continue;
    if ((source.xcr0 & row.state) != row.state) continue;
    if (kernel_flags.has_value() && !kernel_flags->count(row.info.cpuinfo)) {
      continue;
    }
    cpu.isas.push_back(row.info.isa);
  }
  cpu.level = MicroArchLevel(cpu.isas);
  return cpu;
}

CpuidSource HostCpuid() {
  CpuidSource source;
#if defined(__x86_64__) || defined(__i386__)
  source.cpuid = [](uint32_t leaf, uint32_t subleaf) {
    CpuidRegs r;
    __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
    return r;
  };
  CpuidRegs leaf1 = source.cpuid(1, 0);
  constexpr uint32_t kOsxsave = 1u << 27;
  if (leaf1.ecx & kOsxsave) {
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    source.xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
#else
  source.cpuid = [](uint32_t, uint32_t) { return CpuidRegs(); };
#endif
  return source;
}

CpuInfo ReadCpu(const std::string& proc_cpuinfo) {
#if defined(__x86_64__) || defined(__i386__)
  return DecodeCpu(HostCpuid(), ReadCpuinfoFlags(proc_cpuinfo));
#else
  (void)proc_cpuinfo;
  return CpuInfo();
#endif
}

}  // namespace ctxsel::agent
