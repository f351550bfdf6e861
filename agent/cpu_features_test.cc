#include "agent/cpu_features.h"

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "agent/testdata/testdata_path.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rule on this host, whatever its CPU: a feature is reported exactly when
// cpuid and XCR0 report it and the kernel lists it.
TEST(ReadCpuTest, IsCpuidAgreeingWithProcCpuinfo) {
  std::optional<KernelCpuFlags> flags = ReadCpuinfoFlags("/proc/cpuinfo");
  if (!flags.has_value()) GTEST_SKIP() << "no x86 flags line in /proc/cpuinfo";
  CpuInfo cpuid_only = DecodeCpu(HostCpuid(), std::nullopt);
  CpuInfo cpu = ReadCpu("/proc/cpuinfo");
  ASSERT_FALSE(cpu.isas.empty());
  for (const CpuFeatureInfo& f : AllCpuFeatures()) {
    EXPECT_EQ(cpu.HasIsa(f.isa),
              cpuid_only.HasIsa(f.isa) && flags->count(f.cpuinfo) == 1)
        << "isa " << f.isa << " (cpuinfo flag " << f.cpuinfo << ")";
  }
}

TEST(ReadCpuTest, WithoutProcCpuinfoCpuidDecides) {
  CpuInfo cpuid_only = DecodeCpu(HostCpuid(), std::nullopt);
  CpuInfo cpu = ReadCpu(TestdataPath("no_such_cpuinfo"));
  EXPECT_EQ(cpu.isas, cpuid_only.isas);
  EXPECT_EQ(cpu.level, cpuid_only.level);
}

TEST(ReadCpuTest, VendorAndModelAgreeWithProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key =
        line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    fields.emplace(key, colon + 2 <= line.size() ? line.substr(colon + 2) : "");
  }
  if (!fields.count("vendor_id")) GTEST_SKIP() << "not an x86 /proc/cpuinfo";
  CpuInfo cpu = ReadCpu("/proc/cpuinfo");
  EXPECT_EQ(cpu.vendor_id, fields["vendor_id"]);
  EXPECT_EQ(std::to_string(cpu.family), fields["cpu family"]);
  EXPECT_EQ(std::to_string(cpu.model), fields["model"]);
  EXPECT_EQ(cpu.brand, fields["model name"]);
  EXPECT_GE(cpu.level, 1);
}

// A fake processor: vendor "GenuineIntel", leaf 1 and leaf 7 set as given.
CpuidSource FakeIntel(CpuidRegs leaf1, CpuidRegs leaf7, uint64_t xcr0) {
  CpuidSource source;
  source.xcr0 = xcr0;
  source.cpuid = [=](uint32_t leaf, uint32_t subleaf) {
    CpuidRegs r;
    if (leaf == 0) {
      r.eax = 7;
      r.ebx = 0x756e6547;  // "Genu"
      r.edx = 0x49656e69;  // "ineI"
      r.ecx = 0x6c65746e;  // "ntel"
    } else if (leaf == 1) {
      r = leaf1;
    } else if (leaf == 7 && subleaf == 0) {
      r = leaf7;
    }
    return r;
  };
  return source;
}

TEST(DecodeCpuTest, DecodesVendorFamilyModel) {
  CpuidRegs leaf1;
  leaf1.eax = 0x000806f8;  // family 6, model 0x8f, stepping 8
  CpuInfo cpu = DecodeCpu(FakeIntel(leaf1, {}, 0), std::nullopt);
  EXPECT_EQ(cpu.vendor_id, "GenuineIntel");
  EXPECT_EQ(cpu.vendor, "intel");
  EXPECT_EQ(cpu.family, 6);
  EXPECT_EQ(cpu.model, 0x8f);
  EXPECT_EQ(cpu.stepping, 8);
}

TEST(DecodeCpuTest, AvxNeedsOsSupport) {
  CpuidRegs leaf1;
  leaf1.ecx = 1u << 28;  // avx
  CpuidRegs leaf7;
  leaf7.ebx = (1u << 5) | (1u << 16);  // avx2, avx512f
  EXPECT_FALSE(
      DecodeCpu(FakeIntel(leaf1, leaf7, 0x3), std::nullopt).HasIsa("avx"));
  CpuInfo with_ymm = DecodeCpu(FakeIntel(leaf1, leaf7, 0x7), std::nullopt);
  EXPECT_TRUE(with_ymm.HasIsa("avx"));
  EXPECT_TRUE(with_ymm.HasIsa("avx2"));
  EXPECT_FALSE(with_ymm.HasIsa("avx512f"));
  EXPECT_TRUE(
      DecodeCpu(FakeIntel(leaf1, leaf7, 0xe7), std::nullopt).HasIsa("avx512f"));
}

TEST(DecodeCpuTest, SkipsLeavesBeyondTheMaximum) {
  CpuidSource source;
  source.cpuid = [](uint32_t leaf, uint32_t) {
    CpuidRegs r;
    if (leaf == 0) r.eax = 1;  // leaf 7 does not exist
    if (leaf == 7) r.ebx = ~0u;
    return r;
  };
  source.xcr0 = ~0ull;
  EXPECT_FALSE(DecodeCpu(source, std::nullopt).HasIsa("avx2"));
}

// A processor whose cpuid reports every feature bit, with every register
// state enabled in XCR0: what is reported is decided by the kernel's flags.
CpuidSource EveryFeature() {
  CpuidSource source;
  source.xcr0 = ~0ull;
  source.cpuid = [](uint32_t leaf, uint32_t subleaf) {
    CpuidRegs r;
    r.eax = r.ebx = r.ecx = r.edx = ~0u;
    if (leaf == 0) {
      r.eax = 7;
      r.ebx = 0x68747541;  // "Auth"
      r.edx = 0x69746e65;  // "enti"
      r.ecx = 0x444d4163;  // "cAMD"
    } else if (leaf == 1) {
      r.eax = 0x00b00f21;  // family 0x1a, model 2, stepping 1
    } else if (leaf == 7 && subleaf == 0) {
      r.eax = 1;  // highest leaf 7 subleaf
    } else if (leaf == 0x80000000) {
      r.eax = 0x80000001;
    }
    return r;
  };
  return source;
}

KernelCpuFlags FixtureFlags(const std::string& name) {
  std::optional<KernelCpuFlags> flags =
      ParseCpuinfoFlags(ReadText(TestdataPath(name)));
  EXPECT_TRUE(flags.has_value()) << name;
  return flags.value_or(KernelCpuFlags());
}

// `flags` without `flag`, as with the kernel's clearcpuid=<flag>.
KernelCpuFlags Without(KernelCpuFlags flags, const std::string& flag) {
  EXPECT_EQ(flags.erase(flag), 1u) << flag;
  return flags;
}

struct KernelCase {
  std::string name;
  CpuidSource cpuid;
  std::optional<KernelCpuFlags> kernel_flags;
  std::vector<std::string> reported;
  std::vector<std::string> dropped;
  int level;
};

TEST(DecodeCpuTest, ReportsWhatCpuidXcr0AndTheKernelAgreeOn) {
  CpuidSource ymm_only = EveryFeature();
  ymm_only.xcr0 = 0x7;  // the OS enables AVX state but not AVX-512 state
  const KernelCase cases[] = {
      // Zen 5: cpuid has RDSEED, Linux clears it for an erratum.
      {"zen5",
       EveryFeature(),
       FixtureFlags("cpuinfo_zen5.txt"),
       {"avx512f", "avx512_vp2intersect", "avx512_bf16", "avx_vnni", "sse3",
        "sha", "lzcnt"},
       {"rdseed", "amx_tile", "avx512_fp16"},
       4},
      {"zen3",
       EveryFeature(),
       FixtureFlags("cpuinfo_zen3.txt"),
       {"rdseed", "avx2", "vaes", "sha"},
       {"avx512f", "avx512_vp2intersect", "avx_vnni"},
       3},
      {"no /proc/cpuinfo",
       EveryFeature(),
       std::nullopt,
       {"rdseed", "avx512_vp2intersect", "amx_tile", "avx512_fp16"},
       {},
       4},
      {"clearcpuid=avx2",
       EveryFeature(),
       Without(FixtureFlags("cpuinfo_zen3.txt"), "avx2"),
       {"avx", "fma", "rdseed"},
       {"avx2"},
       2},
      {"clearcpuid=rdseed",
       EveryFeature(),
       Without(FixtureFlags("cpuinfo_zen3.txt"), "rdseed"),
       {"rdrand"},
       {"rdseed"},
       3},
      // The kernel listing a feature does not make it usable without XCR0.
      {"zen5 kernel, no AVX-512 state",
       ymm_only,
       FixtureFlags("cpuinfo_zen5.txt"),
       {"avx2", "vaes"},
       {"avx512f", "avx512_vp2intersect", "rdseed"},
       3},
  };
  for (const KernelCase& c : cases) {
    CpuInfo cpu = DecodeCpu(c.cpuid, c.kernel_flags);
    for (const std::string& isa : c.reported) {
      EXPECT_TRUE(cpu.HasIsa(isa)) << c.name << ": " << isa;
    }
    for (const std::string& isa : c.dropped) {
      EXPECT_FALSE(cpu.HasIsa(isa)) << c.name << ": " << isa;
    }
    EXPECT_EQ(cpu.level, c.level) << c.name;
    EXPECT_EQ(cpu.vendor, "amd") << c.name;
  }
}

// Every row of cpu_features.def is spelled as the kernel spells it: with
// cpuid reporting everything, the kernel's list alone decides, row by row.
TEST(DecodeCpuTest, KernelSpellingsComeFromTheTable) {
  for (const char* fixture : {"cpuinfo_zen3.txt", "cpuinfo_zen5.txt"}) {
    KernelCpuFlags flags = FixtureFlags(fixture);
    CpuInfo cpu = DecodeCpu(EveryFeature(), flags);
    for (const CpuFeatureInfo& f : AllCpuFeatures()) {
      EXPECT_EQ(cpu.HasIsa(f.isa), flags.count(f.cpuinfo) == 1)
          << fixture << ": isa " << f.isa << " (cpuinfo flag " << f.cpuinfo
          << ")";
    }
  }
}

TEST(ParseCpuinfoFlagsTest, IntersectsTheProcessorsFlagsLines) {
  std::optional<KernelCpuFlags> flags = ParseCpuinfoFlags(
      "processor\t: 0\n"
      "flags\t\t: fpu sse2 avx2 rdseed\n"
      "vmx flags\t: ept vpid\n"
      "bugs\t\t: spectre_v1\n"
      "\n"
      "processor\t: 1\n"
      "flags\t\t: fpu sse2 avx2\n");
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(*flags, (KernelCpuFlags{"avx2", "fpu", "sse2"}));
}

TEST(ParseCpuinfoFlagsTest, NoFlagsLineMeansNoKernelView) {
  // An arm64 kernel says "Features", which are not x86 flags.
  EXPECT_FALSE(
      ParseCpuinfoFlags("processor\t: 0\nFeatures\t: fp asimd\n").has_value());
  EXPECT_FALSE(ParseCpuinfoFlags("").has_value());
}

TEST(ReadCpuinfoFlagsTest, ReadsAFileOrSaysItCannot) {
  EXPECT_FALSE(ReadCpuinfoFlags(TestdataPath("no_such_cpuinfo")).has_value());
  std::optional<KernelCpuFlags> zen5 =
      ReadCpuinfoFlags(TestdataPath("cpuinfo_zen5.txt"));
  ASSERT_TRUE(zen5.has_value());
  EXPECT_EQ(zen5->count("avx512_vp2intersect"), 1u);
  EXPECT_EQ(zen5->count("rdseed"), 0u);
  EXPECT_EQ(zen5, FixtureFlags("cpuinfo_zen5.txt"));
}

struct LevelCase {
  std::vector<std::string> isas;
  int level;
};

TEST(MicroArchLevelTest, FollowsThePsAbiLevels) {
  std::vector<std::string> v1 = {"fpu",  "cx8", "cmov", "mmx",
                                 "fxsr", "sse", "sse2"};
  std::vector<std::string> v2 = v1;
  for (auto s :
       {"sse3", "ssse3", "cx16", "sse4_1", "sse4_2", "popcnt", "lahf_lm"}) {
    v2.push_back(s);
  }
  std::vector<std::string> v3 = v2;
  for (auto s : {"fma", "movbe", "xsave", "avx", "f16c", "bmi1", "avx2", "bmi2",
                 "lzcnt"}) {
    v3.push_back(s);
  }
  std::vector<std::string> v4 = v3;
  for (auto s : {"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"}) {
    v4.push_back(s);
  }
  std::vector<std::string> v4_without_popcnt = v4;
  v4_without_popcnt.erase(
      std::find(v4_without_popcnt.begin(), v4_without_popcnt.end(), "popcnt"));
  const LevelCase cases[] = {
      {{}, 0}, {{"sse2"}, 0},          {v1, 1}, {v2, 2}, {v3, 3},
      {v4, 4}, {v4_without_popcnt, 1},
  };
  for (const LevelCase& c : cases) {
    EXPECT_EQ(MicroArchLevel(c.isas), c.level) << c.isas.size() << " isas";
  }
}

TEST(CpuInfoTest, LevelNames) {
  CpuInfo cpu;
  EXPECT_EQ(cpu.LevelName(), "");
  cpu.level = 1;
  EXPECT_EQ(cpu.LevelName(), "x86_64");
  cpu.level = 3;
  EXPECT_EQ(cpu.LevelName(), "x86_64_v3");
}

}  // namespace
}  // namespace ctxsel::agent
