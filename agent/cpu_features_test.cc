#include "agent/cpu_features.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

// The "flags" line of the first processor in /proc/cpuinfo, as a set.
std::set<std::string> ProcCpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(ReadCpuTest, AgreesWithProcCpuinfo) {
  std::set<std::string> flags = ProcCpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no x86 flags line in /proc/cpuinfo";
  CpuInfo cpu = ReadCpu();
  ASSERT_FALSE(cpu.isas.empty());
  for (const CpuFeatureInfo& f : AllCpuFeatures()) {
    EXPECT_EQ(cpu.HasIsa(f.isa), flags.count(f.cpuinfo) == 1)
        << "isa " << f.isa << " (cpuinfo flag " << f.cpuinfo << ")";
  }
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
  CpuInfo cpu = ReadCpu();
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
  CpuInfo cpu = DecodeCpu(FakeIntel(leaf1, {}, 0));
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
  EXPECT_FALSE(DecodeCpu(FakeIntel(leaf1, leaf7, 0x3)).HasIsa("avx"));
  CpuInfo with_ymm = DecodeCpu(FakeIntel(leaf1, leaf7, 0x7));
  EXPECT_TRUE(with_ymm.HasIsa("avx"));
  EXPECT_TRUE(with_ymm.HasIsa("avx2"));
  EXPECT_FALSE(with_ymm.HasIsa("avx512f"));
  EXPECT_TRUE(DecodeCpu(FakeIntel(leaf1, leaf7, 0xe7)).HasIsa("avx512f"));
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
  EXPECT_FALSE(DecodeCpu(source).HasIsa("avx2"));
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
