#include "server/registry/kernel_variants.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

std::vector<Variant> Named(const std::string& kernel, int from, int count) {
  static const selector::Selector* const kGpu =
      new selector::Selector(*selector::Selector::Parse("device={kind(gpu)}"));
  std::vector<Variant> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.push_back(Variant{kernel,
                          absl::StrCat(kernel, "_", from + i),
                          "device={kind(gpu)}",
                          *kGpu,
                          i,
                          1,
                          {}});
  }
  return out;
}

TEST(KernelVariantsTest, NamesMustBeNewAndOfTheKernel) {
  std::vector<Variant> kept = Named("saxpy", 0, 2);
  EXPECT_TRUE(CheckKernelVariants("saxpy", kept, Named("saxpy", 2, 2)).ok());
  absl::Status taken = CheckKernelVariants("saxpy", kept, Named("saxpy", 1, 1));
  EXPECT_EQ(taken.code(), absl::StatusCode::kAlreadyExists);
  absl::Status other = CheckKernelVariants("saxpy", kept, Named("daxpy", 9, 1));
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
}

// One registration cannot make every later Select of a kernel resolve an
// unbounded list.
TEST(KernelVariantsTest, AKernelHasAtMostTheCapOfVariants) {
  std::vector<Variant> kept = Named("saxpy", 0, kMaxVariantsPerKernel - 1);
  EXPECT_TRUE(
      CheckKernelVariants("saxpy", kept, Named("saxpy", 1 << 20, 1)).ok());
  absl::Status over =
      CheckKernelVariants("saxpy", kept, Named("saxpy", 1 << 20, 2));
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      over.message(),
      HasSubstr(absl::StrCat("would have ", kMaxVariantsPerKernel + 1,
                             " variants; at most ", kMaxVariantsPerKernel)));
}

// Image ids are checked where the list is: placement parses them unchecked.
TEST(KernelVariantsTest, ImagesMustBeImageIds) {
  std::vector<Variant> added = Named("saxpy", 0, 1);
  added[0].metadata.images = {"cubin:sm_90", "amdgcn:gfx90a:xnack-"};
  EXPECT_TRUE(CheckKernelVariants("saxpy", {}, added).ok());
  added[0].metadata.images.push_back("fpga:x");
  absl::Status bad = CheckKernelVariants("saxpy", {}, added);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(),
              HasSubstr("variants[0] (saxpy_0).metadata.images[2]"));
  added[0].metadata.images.assign(kMaxImages + 1, "ptx:sm_80");
  EXPECT_THAT(CheckKernelVariants("saxpy", {}, added).message(),
              HasSubstr("at most 256"));
}

}  // namespace
}  // namespace ctxsel::server
