#include "selector/sycl/arch_catalog.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::sycl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Transcribed from dpcpp-device-if-and-device-architecture-design.txt (the
// -fsycl-targets names, plus x86_64 from spir64_x86_64), independently of
// arch_catalog.def, so that a missing or misspelt catalog row fails here.
constexpr absl::string_view kDesignNames =
    "x86_64 intel_gpu_bdw intel_gpu_skl intel_gpu_kbl intel_gpu_cfl "
    "intel_gpu_apl intel_gpu_glk intel_gpu_whl intel_gpu_aml "
    "intel_gpu_cml intel_gpu_icllp intel_gpu_tgllp intel_gpu_rkl "
    "intel_gpu_adl_s intel_gpu_rpl_s intel_gpu_adl_p intel_gpu_adl_n "
    "intel_gpu_dg1 intel_gpu_acm_g10 intel_gpu_acm_g11 "
    "intel_gpu_acm_g12 intel_gpu_pvc nvidia_gpu_sm_50 nvidia_gpu_sm_52 "
    "nvidia_gpu_sm_53 nvidia_gpu_sm_60 nvidia_gpu_sm_61 "
    "nvidia_gpu_sm_62 nvidia_gpu_sm_70 nvidia_gpu_sm_72 "
    "nvidia_gpu_sm_75 nvidia_gpu_sm_80 nvidia_gpu_sm_86 "
    "nvidia_gpu_sm_87 nvidia_gpu_sm_89 nvidia_gpu_sm_90 amd_gpu_gfx700 "
    "amd_gpu_gfx701 amd_gpu_gfx702 amd_gpu_gfx703 amd_gpu_gfx704 "
    "amd_gpu_gfx705 amd_gpu_gfx801 amd_gpu_gfx802 amd_gpu_gfx803 "
    "amd_gpu_gfx805 amd_gpu_gfx810 amd_gpu_gfx900 amd_gpu_gfx902 "
    "amd_gpu_gfx904 amd_gpu_gfx906 amd_gpu_gfx908 amd_gpu_gfx909 "
    "amd_gpu_gfx90a amd_gpu_gfx90c amd_gpu_gfx940 amd_gpu_gfx941 "
    "amd_gpu_gfx942 amd_gpu_gfx1010 amd_gpu_gfx1011 amd_gpu_gfx1012 "
    "amd_gpu_gfx1013 amd_gpu_gfx1030 amd_gpu_gfx1031 amd_gpu_gfx1032 "
    "amd_gpu_gfx1033 amd_gpu_gfx1034 amd_gpu_gfx1035 amd_gpu_gfx1036 "
    "amd_gpu_gfx1100 amd_gpu_gfx1101 amd_gpu_gfx1102 amd_gpu_gfx1103 "
    "amd_gpu_gfx1150 amd_gpu_gfx1151 amd_gpu_gfx1200 amd_gpu_gfx1201 ";

constexpr absl::string_view kDesignMacros =
    "__SYCL_TARGET_INTEL_GPU_BDW__ __SYCL_TARGET_INTEL_GPU_SKL__ "
    "__SYCL_TARGET_INTEL_GPU_KBL__ __SYCL_TARGET_INTEL_GPU_CFL__ "
    "__SYCL_TARGET_INTEL_GPU_APL__ __SYCL_TARGET_INTEL_GPU_GLK__ "
    "__SYCL_TARGET_INTEL_GPU_WHL__ __SYCL_TARGET_INTEL_GPU_AML__ "
    "__SYCL_TARGET_INTEL_GPU_CML__ __SYCL_TARGET_INTEL_GPU_ICLLP__ "
    "__SYCL_TARGET_INTEL_GPU_TGLLP__ __SYCL_TARGET_INTEL_GPU_RKL__ "
    "__SYCL_TARGET_INTEL_GPU_ADL_S__ __SYCL_TARGET_INTEL_GPU_RPL_S__ "
    "__SYCL_TARGET_INTEL_GPU_ADL_P__ __SYCL_TARGET_INTEL_GPU_ADL_N__ "
    "__SYCL_TARGET_INTEL_GPU_DG1__ __SYCL_TARGET_INTEL_GPU_ACM_G10__ "
    "__SYCL_TARGET_INTEL_GPU_ACM_G11__ "
    "__SYCL_TARGET_INTEL_GPU_ACM_G12__ __SYCL_TARGET_INTEL_GPU_PVC__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_50__ __SYCL_TARGET_NVIDIA_GPU_SM_52__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_53__ __SYCL_TARGET_NVIDIA_GPU_SM_60__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_61__ __SYCL_TARGET_NVIDIA_GPU_SM_62__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_70__ __SYCL_TARGET_NVIDIA_GPU_SM_72__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_75__ __SYCL_TARGET_NVIDIA_GPU_SM_80__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_86__ __SYCL_TARGET_NVIDIA_GPU_SM_87__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_89__ __SYCL_TARGET_NVIDIA_GPU_SM_90__ "
    "__SYCL_TARGET_NVIDIA_GPU_SM_90A__ __SYCL_TARGET_AMD_GPU_GFX700__ "
    "__SYCL_TARGET_AMD_GPU_GFX701__ __SYCL_TARGET_AMD_GPU_GFX702__ "
    "__SYCL_TARGET_AMD_GPU_GFX703__ __SYCL_TARGET_AMD_GPU_GFX704__ "
    "__SYCL_TARGET_AMD_GPU_GFX705__ __SYCL_TARGET_AMD_GPU_GFX801__ "
    "__SYCL_TARGET_AMD_GPU_GFX802__ __SYCL_TARGET_AMD_GPU_GFX803__ "
    "__SYCL_TARGET_AMD_GPU_GFX805__ __SYCL_TARGET_AMD_GPU_GFX810__ "
    "__SYCL_TARGET_AMD_GPU_GFX900__ __SYCL_TARGET_AMD_GPU_GFX902__ "
    "__SYCL_TARGET_AMD_GPU_GFX904__ __SYCL_TARGET_AMD_GPU_GFX906__ "
    "__SYCL_TARGET_AMD_GPU_GFX908__ __SYCL_TARGET_AMD_GPU_GFX909__ "
    "__SYCL_TARGET_AMD_GPU_GFX90A__ __SYCL_TARGET_AMD_GPU_GFX90C__ "
    "__SYCL_TARGET_AMD_GPU_GFX940__ __SYCL_TARGET_AMD_GPU_GFX941__ "
    "__SYCL_TARGET_AMD_GPU_GFX942__ __SYCL_TARGET_AMD_GPU_GFX1010__ "
    "__SYCL_TARGET_AMD_GPU_GFX1011__ __SYCL_TARGET_AMD_GPU_GFX1012__ "
    "__SYCL_TARGET_AMD_GPU_GFX1013__ __SYCL_TARGET_AMD_GPU_GFX1030__ "
    "__SYCL_TARGET_AMD_GPU_GFX1031__ __SYCL_TARGET_AMD_GPU_GFX1032__ "
    "__SYCL_TARGET_AMD_GPU_GFX1033__ __SYCL_TARGET_AMD_GPU_GFX1034__ "
    "__SYCL_TARGET_AMD_GPU_GFX1035__ __SYCL_TARGET_AMD_GPU_GFX1036__ "
    "__SYCL_TARGET_AMD_GPU_GFX1100__ __SYCL_TARGET_AMD_GPU_GFX1101__ "
    "__SYCL_TARGET_AMD_GPU_GFX1102__ __SYCL_TARGET_AMD_GPU_GFX1103__ "
    "__SYCL_TARGET_AMD_GPU_GFX1150__ __SYCL_TARGET_AMD_GPU_GFX1151__ "
    "__SYCL_TARGET_AMD_GPU_GFX1200__ __SYCL_TARGET_AMD_GPU_GFX1201__ "
    "__SYCL_TARGET_INTEL_X86_64__ ";

struct Alias {
  absl::string_view alias;
  absl::string_view canonical;
};

constexpr Alias kDesignAliases[] = {
    {"intel_gpu_8_0_0", "intel_gpu_bdw"},
    {"intel_gpu_9_0_9", "intel_gpu_skl"},
    {"intel_gpu_9_1_9", "intel_gpu_kbl"},
    {"intel_gpu_9_2_9", "intel_gpu_cfl"},
    {"intel_gpu_9_3_0", "intel_gpu_apl"},
    {"intel_gpu_9_4_0", "intel_gpu_glk"},
    {"intel_gpu_9_5_0", "intel_gpu_whl"},
    {"intel_gpu_9_6_0", "intel_gpu_aml"},
    {"intel_gpu_9_7_0", "intel_gpu_cml"},
    {"intel_gpu_11_0_0", "intel_gpu_icllp"},
    {"intel_gpu_12_0_0", "intel_gpu_tgllp"},
    {"intel_gpu_12_10_0", "intel_gpu_dg1"},
};

std::vector<std::string> Words(absl::string_view text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

TEST(ArchCatalogTest, EveryDesignNameResolvesToItself) {
  for (const std::string& name : Words(kDesignNames)) {
    const ArchInfo* arch = FindArch(name);
    ASSERT_NE(arch, nullptr) << name;
    EXPECT_EQ(arch->name, name);
  }
}

TEST(ArchCatalogTest, EveryDesignAliasResolvesToItsArchitecture) {
  for (const Alias& alias : kDesignAliases) {
    const ArchInfo* arch = FindArch(alias.alias);
    ASSERT_NE(arch, nullptr) << alias.alias;
    EXPECT_EQ(arch->name, alias.canonical) << alias.alias;
    EXPECT_THAT(arch->aliases, ::testing::Contains(alias.alias));
  }
}

TEST(ArchCatalogTest, EveryDesignMacroResolvesAndEveryRowHasOne) {
  absl::flat_hash_set<std::string> design_macros;
  for (const std::string& macro : Words(kDesignMacros)) {
    design_macros.insert(macro);
    const ArchInfo* arch = FindArch(macro);
    ASSERT_NE(arch, nullptr) << macro;
    EXPECT_EQ(arch->macro, macro);
  }
  for (const ArchInfo& arch : AllArchs()) {
    EXPECT_TRUE(design_macros.contains(arch.macro)) << arch.name;
  }
  EXPECT_EQ(AllArchs().size(), design_macros.size());
}

TEST(ArchCatalogTest, GpuMacrosAreTheUpperCasedName) {
  for (const ArchInfo& arch : AllArchs()) {
    if (arch.id == ArchId::kX86_64) {
      EXPECT_EQ(arch.macro, "__SYCL_TARGET_INTEL_X86_64__");
      continue;
    }
    EXPECT_EQ(arch.macro, absl::StrCat("__SYCL_TARGET_",
                                       absl::AsciiStrToUpper(arch.name), "__"));
  }
}

TEST(ArchCatalogTest, NamesAliasesAndMacrosAreUnique) {
  absl::flat_hash_set<absl::string_view> seen;
  for (const ArchInfo& arch : AllArchs()) {
    EXPECT_TRUE(seen.insert(arch.name).second) << arch.name;
    EXPECT_TRUE(seen.insert(arch.macro).second) << arch.macro;
    for (absl::string_view alias : arch.aliases) {
      EXPECT_TRUE(seen.insert(alias).second) << alias;
    }
  }
}

TEST(ArchCatalogTest, RowsAreInIdOrder) {
  for (size_t i = 0; i < AllArchs().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(AllArchs()[i].id), i);
    EXPECT_EQ(&GetArch(AllArchs()[i].id), &AllArchs()[i]);
  }
}

TEST(ArchCatalogTest, FamilyTraitsFollowTheNamePrefix) {
  for (const ArchInfo& arch : AllArchs()) {
    if (absl::StartsWith(arch.name, "nvidia_gpu_")) {
      EXPECT_EQ(arch.vendor, "nvidia");
      EXPECT_THAT(arch.archs, ElementsAre("nvptx", "nvptx64"));
      EXPECT_EQ(arch.isa, arch.name.substr(11));
    } else if (absl::StartsWith(arch.name, "amd_gpu_")) {
      EXPECT_EQ(arch.vendor, "amd");
      EXPECT_THAT(arch.archs, ElementsAre("amdgcn"));
      EXPECT_EQ(arch.isa, arch.name.substr(8));
    } else if (absl::StartsWith(arch.name, "intel_gpu_")) {
      EXPECT_EQ(arch.vendor, "intel");
      EXPECT_THAT(arch.archs, ElementsAre("spir64", "intel_gpu"));
      EXPECT_EQ(arch.isa, arch.name.substr(10));
    } else {
      EXPECT_EQ(arch.name, "x86_64");
      continue;
    }
    EXPECT_THAT(arch.kinds, ElementsAre("gpu", "nohost"));
  }
}

TEST(ArchCatalogTest, NvidiaTraits) {
  absl::StatusOr<selector::DeviceTraits> t =
      DeviceTraitsFor("nvidia_gpu_sm_80");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->kind, UnorderedElementsAre("gpu", "nohost"));
  EXPECT_THAT(t->arch,
              UnorderedElementsAre("nvptx", "nvptx64", "nvidia_gpu_sm_80"));
  EXPECT_THAT(t->isa, UnorderedElementsAre("sm_80"));
  EXPECT_THAT(t->vendor, UnorderedElementsAre("nvidia"));
  EXPECT_TRUE(t->extension.empty());
}

TEST(ArchCatalogTest, AmdTraits) {
  absl::StatusOr<selector::DeviceTraits> t = DeviceTraitsFor("amd_gpu_gfx90a");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->kind, UnorderedElementsAre("gpu", "nohost"));
  EXPECT_THAT(t->arch, UnorderedElementsAre("amdgcn", "amd_gpu_gfx90a"));
  EXPECT_THAT(t->isa, UnorderedElementsAre("gfx90a"));
  EXPECT_THAT(t->vendor, UnorderedElementsAre("amd"));
}

TEST(ArchCatalogTest, IntelTraitsIncludeAliasesWhicheverNameIsGiven) {
  for (absl::string_view name : {"intel_gpu_tgllp", "intel_gpu_12_0_0",
                                 "__SYCL_TARGET_INTEL_GPU_TGLLP__"}) {
    absl::StatusOr<selector::DeviceTraits> t = DeviceTraitsFor(name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(t->kind, UnorderedElementsAre("gpu", "nohost"));
    EXPECT_THAT(t->arch,
                UnorderedElementsAre("spir64", "intel_gpu", "intel_gpu_tgllp",
                                     "intel_gpu_12_0_0"));
    EXPECT_THAT(t->isa, UnorderedElementsAre("tgllp"));
    EXPECT_THAT(t->vendor, UnorderedElementsAre("intel"));
  }
  absl::StatusOr<selector::DeviceTraits> pvc = DeviceTraitsFor("intel_gpu_pvc");
  ASSERT_TRUE(pvc.ok());
  EXPECT_THAT(pvc->isa, UnorderedElementsAre("pvc"));
  EXPECT_THAT(pvc->arch,
              UnorderedElementsAre("spir64", "intel_gpu", "intel_gpu_pvc"));
}

TEST(ArchCatalogTest, X86IsAHostCpuWithNoVendorOrIsa) {
  absl::StatusOr<selector::DeviceTraits> t = DeviceTraitsFor("x86_64");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->kind, UnorderedElementsAre("cpu", "host"));
  EXPECT_THAT(t->arch, UnorderedElementsAre("x86_64"));
  EXPECT_TRUE(t->isa.empty());
  EXPECT_TRUE(t->vendor.empty());
}

// Decision: sm_90a is the architecture-specific target of compute capability
// 9.0 devices; nvidia_gpu_sm_90 and nvidia_gpu_sm_90a describe the same
// devices, which offer both isas.
TEST(ArchCatalogTest, Sm90aRunsOnSm90Devices) {
  const ArchInfo* sm90a = FindArch("nvidia_gpu_sm_90a");
  const ArchInfo* sm90 = FindArch("nvidia_gpu_sm_90");
  const ArchInfo* sm89 = FindArch("nvidia_gpu_sm_89");
  ASSERT_NE(sm90a, nullptr);
  ASSERT_NE(sm90, nullptr);
  ASSERT_NE(sm89, nullptr);
  EXPECT_EQ(sm90a->macro, "__SYCL_TARGET_NVIDIA_GPU_SM_90A__");
  EXPECT_EQ(sm90a->isa, "sm_90a");
  EXPECT_EQ(sm90a->device, ArchId::kNvidiaGpuSm90);
  EXPECT_TRUE(SameDevices(*sm90a, *sm90));
  EXPECT_FALSE(SameDevices(*sm90, *sm89));
  EXPECT_THAT(DeviceArchNames(*sm90),
              ElementsAre("nvidia_gpu_sm_90", "nvidia_gpu_sm_90a"));
  for (absl::string_view name : {"nvidia_gpu_sm_90", "nvidia_gpu_sm_90a"}) {
    absl::StatusOr<selector::DeviceTraits> t = DeviceTraitsFor(name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(t->isa, UnorderedElementsAre("sm_90", "sm_90a"));
    EXPECT_THAT(t->arch,
                UnorderedElementsAre("nvptx", "nvptx64", "nvidia_gpu_sm_90",
                                     "nvidia_gpu_sm_90a"));
  }
  absl::StatusOr<selector::DeviceTraits> t89 =
      DeviceTraitsFor("nvidia_gpu_sm_89");
  ASSERT_TRUE(t89.ok());
  EXPECT_THAT(t89->isa, UnorderedElementsAre("sm_89"));
}

TEST(ArchCatalogTest, UnknownNamesListTheNearestValidNames) {
  EXPECT_EQ(FindArch("nvidia_gpu_sm_91"), nullptr);
  EXPECT_EQ(FindArch("NVIDIA_GPU_SM_90"), nullptr);
  EXPECT_THAT(NearestArchNames("nvidia_gpu_sm_91", 1),
              ElementsAre("nvidia_gpu_sm_90"));
  EXPECT_THAT(NearestArchNames("NVIDIA_GPU_SM_90", 1),
              ElementsAre("nvidia_gpu_sm_90"));
  EXPECT_THAT(NearestArchNames("amd_gpu_gfx90b", 2),
              ElementsAre("amd_gpu_gfx90a", "amd_gpu_gfx90c"));
  EXPECT_THAT(NearestArchNames("intel_gpu_12_0_1", 1),
              ElementsAre("intel_gpu_12_0_0"));
  EXPECT_EQ(NearestArchNames("x").size(), 3u);
  EXPECT_TRUE(NearestArchNames("x", 0).empty());

  absl::StatusOr<const ArchInfo*> a = LookupArch("intel_gpu_pcv");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(a.status().message(),
              HasSubstr("unknown SYCL architecture 'intel_gpu_pcv'; nearest: "
                        "intel_gpu_pvc"));
  absl::StatusOr<selector::DeviceTraits> t = DeviceTraitsFor("gfx90a");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("amd_gpu_gfx90a"));
}

}  // namespace
}  // namespace ctxsel::sycl
