#include "devices/arch_traits.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

using Names = std::vector<std::string>;

struct Case {
  std::string sycl_architecture;
  Names kind, arch, isa, vendor;
};

TEST(ApplyArchTraitsTest, DerivesTraitsFromTheName) {
  const Case cases[] = {
      {"x86_64", {"cpu", "host"}, {"x86_64"}, {}, {}},
      // sm_90a is the same devices' architecture-specific target.
      {"nvidia_gpu_sm_90",
       {"gpu", "nohost"},
       {"nvidia_gpu_sm_90", "nvidia_gpu_sm_90a", "nvptx", "nvptx64"},
       {"sm_90", "sm_90a"},
       {"nvidia"}},
      {"amd_gpu_gfx90a",
       {"gpu", "nohost"},
       {"amd_gpu_gfx90a", "amdgcn"},
       {"gfx90a"},
       {"amd"}},
      {"intel_gpu_pvc",
       {"gpu", "nohost"},
       {"intel_gpu", "intel_gpu_pvc", "spir64"},
       {"pvc"},
       {"intel"}},
      // An alias gives the canonical architecture's traits and both names.
      {"intel_gpu_12_0_0",
       {"gpu", "nohost"},
       {"intel_gpu", "intel_gpu_12_0_0", "intel_gpu_tgllp", "spir64"},
       {"tgllp"},
       {"intel"}},
  };
  for (const Case& c : cases) {
    DeviceInfo d;
    d.sycl_architecture = c.sycl_architecture;
    ASSERT_TRUE(ApplyArchTraits(d).ok()) << c.sycl_architecture;
    EXPECT_EQ(d.kind, c.kind) << c.sycl_architecture;
    EXPECT_EQ(d.arch, c.arch) << c.sycl_architecture;
    EXPECT_EQ(d.isa, c.isa) << c.sycl_architecture;
    EXPECT_EQ(d.vendor, c.vendor) << c.sycl_architecture;
  }
}

TEST(ApplyArchTraitsTest, KeepsExistingTraitsAndAddsNoDuplicates) {
  DeviceInfo d;
  d.sycl_architecture = "amd_gpu_gfx942";
  d.isa = {"gfx942", "mfma"};
  d.vendor = {"amd"};
  ASSERT_TRUE(ApplyArchTraits(d).ok());
  ASSERT_TRUE(ApplyArchTraits(d).ok());
  EXPECT_EQ(d.isa, (Names{"gfx942", "mfma"}));
  EXPECT_EQ(d.vendor, (Names{"amd"}));
  EXPECT_EQ(d.kind, (Names{"gpu", "nohost"}));
}

TEST(ApplyUnknownGpuTraitsTest, DescribesAnUnnamedGpu) {
  DeviceInfo d;
  d.sycl_architecture = "nvidia_gpu_sm_100";
  ApplyUnknownGpuTraits(d, "nvidia", "sm_100");
  EXPECT_EQ(d.sycl_architecture, "");
  EXPECT_EQ(d.kind, (Names{"gpu", "nohost"}));
  EXPECT_EQ(d.vendor, (Names{"nvidia"}));
  EXPECT_EQ(d.isa, (Names{"sm_100"}));
  EXPECT_TRUE(d.arch.empty());
}

TEST(ApplyArchTraitsTest, RejectsUnknownNamesWithoutChangingTheDevice) {
  for (const std::string name :
       {"", "nvidia_gpu_", "nvidia_gpu_sm_9000x", "amd_gpu_gfx", "intel_gpu_",
        "arm64", "intel_cpu_spr"}) {
    DeviceInfo d;
    d.sycl_architecture = name;
    absl::Status s = ApplyArchTraits(d);
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << name;
    EXPECT_NE(s.message().find("sycl_architecture: unknown SYCL architecture"),
              absl::string_view::npos)
        << s.message();
    EXPECT_TRUE(d.kind.empty()) << name;
  }
}

}  // namespace
}  // namespace ctxsel
