// The catalog and the selector engine together: SYCL architecture names in
// `arch` selectors match the devices the catalog says they match, and score
// as any other `arch` trait.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/selector.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::sycl {
namespace {

selector::Context DeviceContext(absl::string_view sycl_arch) {
  selector::Context context;
  selector::AddConstruct(context, "target");
  absl::StatusOr<selector::DeviceTraits> traits = DeviceTraitsFor(sycl_arch);
  EXPECT_TRUE(traits.ok()) << traits.status();
  if (traits.ok()) context.device = *std::move(traits);
  return context;
}

bool Matches(absl::string_view selector_text, absl::string_view sycl_arch) {
  absl::StatusOr<selector::Selector> s =
      selector::Selector::Parse(selector_text);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return false;
  absl::StatusOr<selector::Match> m =
      selector::MatchSelector(*s, DeviceContext(sycl_arch));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() && m->compatible;
}

uint64_t Sum(absl::string_view selector_text, absl::string_view sycl_arch) {
  absl::StatusOr<selector::Selector> s =
      selector::Selector::Parse(selector_text);
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<selector::Match> m =
      selector::MatchSelector(*s, DeviceContext(sycl_arch));
  EXPECT_TRUE(m.ok() && m->compatible) << selector_text;
  return m.ok() ? m->sum : 0;
}

TEST(ArchSelectorTest, SyclNamesMatchTheirDevices) {
  EXPECT_TRUE(Matches("device={arch(nvidia_gpu_sm_90)}", "nvidia_gpu_sm_90"));
  EXPECT_FALSE(Matches("device={arch(nvidia_gpu_sm_90)}", "nvidia_gpu_sm_89"));
  EXPECT_TRUE(Matches("device={arch(nvptx)}", "nvidia_gpu_sm_89"));
  EXPECT_TRUE(Matches("device={arch(intel_gpu_12_0_0)}", "intel_gpu_tgllp"));
  EXPECT_TRUE(Matches("device={arch(intel_gpu_tgllp)}", "intel_gpu_12_0_0"));
  EXPECT_FALSE(Matches("device={arch(intel_gpu_12_0_0)}", "intel_gpu_dg1"));
  EXPECT_TRUE(Matches("device={kind(gpu), arch(amdgcn), isa(gfx90a)}",
                      "amd_gpu_gfx90a"));
  EXPECT_FALSE(Matches("device={kind(cpu)}", "amd_gpu_gfx90a"));
  EXPECT_TRUE(Matches("device={kind(host, cpu), arch(x86_64)}", "x86_64"));
  EXPECT_TRUE(
      Matches("device={vendor(intel), arch(intel_gpu_pvc)}", "intel_gpu_pvc"));
}

TEST(ArchSelectorTest, Sm90aSelectorsMatchComputeCapability90Devices) {
  EXPECT_TRUE(Matches("device={isa(sm_90a)}", "nvidia_gpu_sm_90"));
  EXPECT_TRUE(Matches("device={arch(nvidia_gpu_sm_90a)}", "nvidia_gpu_sm_90"));
  EXPECT_TRUE(Matches("device={isa(sm_90)}", "nvidia_gpu_sm_90a"));
  EXPECT_FALSE(Matches("device={isa(sm_90a)}", "nvidia_gpu_sm_89"));
}

TEST(ArchSelectorTest, SyclNamesScoreAsArchTraits) {
  // One construct trait (target): l = 1, so arch scores 2^(l+1) = 4.
  EXPECT_EQ(Sum("device={arch(nvidia_gpu_sm_90)}", "nvidia_gpu_sm_90"),
            Sum("device={arch(nvptx)}", "nvidia_gpu_sm_90"));
  EXPECT_EQ(Sum("device={arch(nvidia_gpu_sm_90)}", "nvidia_gpu_sm_90"), 4u);
  // Naming both the family and the SYCL name is still one arch trait.
  EXPECT_EQ(Sum("device={arch(nvptx, nvidia_gpu_sm_90)}", "nvidia_gpu_sm_90"),
            4u);
  EXPECT_EQ(Sum("device={isa(sm_90)}", "nvidia_gpu_sm_90"), 8u);
}

}  // namespace
}  // namespace ctxsel::sycl
