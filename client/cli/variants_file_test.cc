#include "client/cli/variants_file.h"

#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

TEST(VariantsFileTest, ReadsAnEvalDocument) {
  auto variants = ParseVariantsFile(
      R"({"context": {}, "variants": [
            {"name": "a", "selector": "device={kind(gpu)}",
             "adjust_args": ["need_device_ptr: x"], "source_file": "k.c",
             "source_line": 7},
            {"name": "b", "selector": "device={kind(cpu)}", "kernel": "k"}]})",
      "k");
  ASSERT_TRUE(variants.ok()) << variants.status();
  ASSERT_EQ(variants->size(), 2);
  EXPECT_EQ((*variants)[0].name(), "a");
  EXPECT_EQ((*variants)[0].metadata().adjust_args(0), "need_device_ptr: x");
  EXPECT_EQ((*variants)[0].metadata().source_line(), 7);
  EXPECT_EQ((*variants)[1].selector(), "device={kind(cpu)}");
}

// `import --from_binary` writes the images once; a variant's own win.
TEST(VariantsFileTest, TopLevelImagesGoToEachVariantWithoutItsOwn) {
  auto variants = ParseVariantsFile(
      R"({"images": ["cubin:sm_90"], "variants": [
            {"name": "a", "selector": "device={kind(gpu)}"},
            {"name": "b", "selector": "device={kind(gpu)}",
             "images": ["amdgcn:gfx90a"]}]})",
      "saxpy");
  ASSERT_TRUE(variants.ok()) << variants.status();
  ASSERT_EQ(variants->size(), 2u);
  EXPECT_EQ((*variants)[0].metadata().images(0), "cubin:sm_90");
  ASSERT_EQ((*variants)[1].metadata().images_size(), 1);
  EXPECT_EQ((*variants)[1].metadata().images(0), "amdgcn:gfx90a");
  EXPECT_FALSE(
      ParseVariantsFile(R"({"images": "x", "variants": []})", "k").ok());
}

TEST(VariantsFileTest, ReadsABareArray) {
  auto variants = ParseVariantsFile(R"([{"name": "a", "selector": "x"}])", "k");
  ASSERT_TRUE(variants.ok()) << variants.status();
  EXPECT_EQ(variants->size(), 1);
}

TEST(VariantsFileTest, RejectsAnotherKernelsVariants) {
  auto variant_level = ParseVariantsFile(
      R"([{"name": "a", "selector": "x"},
          {"name": "b", "selector": "x", "kernel": "gemm"}])",
      "saxpy");
  EXPECT_EQ(variant_level.status().message(),
            "variants[1].kernel: 'gemm' is not the kernel being registered "
            "('saxpy')");
  auto top_level = ParseVariantsFile(
      R"({"kernel": "gemm", "variants": [{"name": "a", "selector": "x"}]})",
      "saxpy");
  EXPECT_EQ(top_level.status().message(),
            "kernel: 'gemm' is not the kernel being registered ('saxpy')");
}

TEST(VariantsFileTest, NamesTheBadField) {
  EXPECT_EQ(ParseVariantsFile("{", "k").status().message(), "not valid JSON");
  EXPECT_EQ(ParseVariantsFile(R"({"variants": 3})", "k").status().message(),
            "expected an array of variants");
  EXPECT_EQ(ParseVariantsFile(R"([{"name": "a"}])", "k").status().message(),
            "variants[0]: needs string fields \"name\" and \"selector\"");
  EXPECT_EQ(ParseVariantsFile(
                R"([{"name": "a", "selector": "x", "append_args": [1]}])", "k")
                .status()
                .message(),
            "variants[0].append_args: not an array of strings");
  EXPECT_EQ(ParseVariantsFile(
                R"([{"name": "a", "selector": "x", "source_line": "7"}])", "k")
                .status()
                .message(),
            "variants[0]: source_file must be a string and source_line an "
            "integer");
}

}  // namespace
}  // namespace ctxsel::cli
