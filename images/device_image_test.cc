#include "images/device_image.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::images {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

selector::DeviceTraits Traits(absl::string_view sycl) {
  absl::StatusOr<selector::DeviceTraits> t = sycl::DeviceTraitsFor(sycl);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

DeviceImage Image(absl::string_view id) {
  absl::StatusOr<DeviceImage> image = ParseImageId(id);
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *image : DeviceImage();
}

TEST(ImageIdTest, MapsTargetsToTheSyclCatalog) {
  DeviceImage cubin = Image("cubin:sm_80");
  EXPECT_EQ(cubin.kind, ImageKind::kCubin);
  EXPECT_EQ(cubin.sycl_architecture, "nvidia_gpu_sm_80");
  EXPECT_EQ(cubin.isa, "sm_80");
  DeviceImage amd = Image("amdgcn:gfx90a:xnack-");
  EXPECT_EQ(amd.sycl_architecture, "amd_gpu_gfx90a");
  EXPECT_EQ(amd.isa, "gfx90a");
  EXPECT_THAT(amd.features, ElementsAre("xnack-"));
  DeviceImage host = Image("host:x86_64-pc-linux-gnu");
  EXPECT_EQ(host.sycl_architecture, "x86_64");
  EXPECT_EQ(ImageId(host), "host:x86_64-pc-linux-gnu");
  // A newer sm than the catalog knows keeps its isa.
  DeviceImage newer = Image("ptx:sm_120");
  EXPECT_EQ(newer.sycl_architecture, "");
  EXPECT_EQ(newer.isa, "sm_120");
  EXPECT_EQ(ImageId(Image("amdgcn:gfx90a:xnack-")), "amdgcn:gfx90a:xnack-");
  // Generic SPIR-V names its triple: the id reads back (the images
  // fuzzer's second find: "spirv:" did not).
  absl::StatusOr<DeviceImage> spirv = ImageFor("spir64", "");
  ASSERT_TRUE(spirv.ok()) << spirv.status();
  EXPECT_EQ(ImageId(*spirv), "spirv:spir64");
  EXPECT_EQ(ImageId(Image("spirv:spir64")), "spirv:spir64");
  EXPECT_EQ(ImageFit(*spirv, Traits("intel_gpu_pvc")), Fit::kGeneric);
  EXPECT_EQ(ImageFit(Image("spirv:pvc"), Traits("intel_gpu_pvc")), Fit::kExact);
}

TEST(ImageIdTest, RejectsMalformedIds) {
  for (absl::string_view bad :
       {"", "cubin", "cubin:", "cubin:gfx90a", "ptx:sm_", "amdgcn:sm_80",
        "fpga:x", "host:mips-linux"}) {
    EXPECT_FALSE(ParseImageId(bad).ok()) << bad;
  }
}

TEST(ImageFitTest, CubinRunsOnItsSmAndLaterMinorsOfItsMajor) {
  EXPECT_EQ(ImageFit(Image("cubin:sm_80"), Traits("nvidia_gpu_sm_80")),
            Fit::kExact);
  std::string why;
  EXPECT_EQ(ImageFit(Image("cubin:sm_80"), Traits("nvidia_gpu_sm_86"), &why),
            Fit::kGeneric);
  EXPECT_THAT(why, HasSubstr("same major"));
  EXPECT_EQ(ImageFit(Image("cubin:sm_80"), Traits("nvidia_gpu_sm_90"), &why),
            Fit::kNone);
  EXPECT_THAT(why, HasSubstr("built for sm_80"));
  EXPECT_EQ(ImageFit(Image("cubin:sm_90"), Traits("nvidia_gpu_sm_80")),
            Fit::kNone);
  // sm_90a code runs on sm_90 devices only (the catalog's RUNS_ON).
  EXPECT_EQ(ImageFit(Image("cubin:sm_90a"), Traits("nvidia_gpu_sm_90")),
            Fit::kExact);
  EXPECT_EQ(ImageFit(Image("cubin:sm_90"), Traits("amd_gpu_gfx90a")),
            Fit::kNone);
}

TEST(ImageFitTest, PtxIsJitCompiledForEveryLaterSm) {
  std::string why;
  EXPECT_EQ(ImageFit(Image("ptx:sm_80"), Traits("nvidia_gpu_sm_90"), &why),
            Fit::kGeneric);
  EXPECT_THAT(why, HasSubstr("JIT-compiled by the CUDA driver for sm_90"));
  EXPECT_EQ(ImageFit(Image("ptx:sm_80"), Traits("nvidia_gpu_sm_80")),
            Fit::kGeneric);
  EXPECT_EQ(ImageFit(Image("ptx:sm_90"), Traits("nvidia_gpu_sm_80")),
            Fit::kNone);
  EXPECT_EQ(ImageFit(Image("ptx:sm_90a"), Traits("nvidia_gpu_sm_89")),
            Fit::kNone);
}

TEST(ImageFitTest, AmdAndHost) {
  EXPECT_EQ(ImageFit(Image("amdgcn:gfx90a:xnack-"), Traits("amd_gpu_gfx90a")),
            Fit::kExact);
  EXPECT_EQ(ImageFit(Image("amdgcn:gfx908"), Traits("amd_gpu_gfx90a")),
            Fit::kNone);
  EXPECT_EQ(ImageFit(Image("host:x86_64-pc-linux-gnu"), Traits("x86_64")),
            Fit::kExact);
  EXPECT_EQ(
      ImageFit(Image("host:x86_64-pc-linux-gnu"), Traits("nvidia_gpu_sm_90")),
      Fit::kNone);
}

TEST(BestImageTest, PrefersTheExactImageOverAnEarlierGenericOne) {
  std::vector<DeviceImage> images = {Image("ptx:sm_70"), Image("cubin:sm_80"),
                                     Image("cubin:sm_90")};
  Fit fit;
  std::string why;
  const DeviceImage* best =
      BestImage(images, Traits("nvidia_gpu_sm_90"), &fit, &why);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(ImageId(*best), "cubin:sm_90");
  EXPECT_EQ(fit, Fit::kExact);
  best = BestImage(images, Traits("nvidia_gpu_sm_75"), &fit, &why);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(ImageId(*best), "ptx:sm_70");
  EXPECT_EQ(fit, Fit::kGeneric);
  EXPECT_THAT(why, HasSubstr("JIT"));
  EXPECT_EQ(BestImage(images, Traits("nvidia_gpu_sm_60"), &fit), nullptr);
  EXPECT_EQ(fit, Fit::kNone);
}

}  // namespace
}  // namespace ctxsel::images
