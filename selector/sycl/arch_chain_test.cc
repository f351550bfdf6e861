#include "selector/sycl/arch_chain.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::sycl {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

ArchChain MustParse(absl::string_view text) {
  absl::StatusOr<ArchChain> chain = ArchChain::Parse(text);
  EXPECT_TRUE(chain.ok()) << chain.status();
  return chain.ok() ? *std::move(chain) : ArchChain();
}

std::optional<std::string> Pick(const ArchChain& chain,
                                absl::string_view device) {
  absl::StatusOr<std::optional<std::string>> v = chain.Select(device);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::nullopt;
}

constexpr absl::string_view kChain =
    "if_architecture_is(intel_gpu_pvc, nvidia_gpu_sm_90): v1;\n"
    "else_if_architecture_is(amd_gpu_gfx90a): v2;\n"
    "otherwise: v3";

TEST(ArchChainTest, FirstClauseContainingTheDeviceWins) {
  ArchChain chain = MustParse(kChain);
  EXPECT_THAT(Pick(chain, "intel_gpu_pvc"), Optional(std::string("v1")));
  EXPECT_THAT(Pick(chain, "nvidia_gpu_sm_90"), Optional(std::string("v1")));
  EXPECT_THAT(Pick(chain, "amd_gpu_gfx90a"), Optional(std::string("v2")));
  EXPECT_THAT(Pick(chain, "amd_gpu_gfx908"), Optional(std::string("v3")));
  EXPECT_THAT(Pick(chain, "x86_64"), Optional(std::string("v3")));
}

TEST(ArchChainTest, OrderDecidesWhenTwoClausesMatch) {
  ArchChain chain = MustParse(
      "if_architecture_is(amd_gpu_gfx90a): first; "
      "else_if_architecture_is(amd_gpu_gfx90a, amd_gpu_gfx942): second");
  EXPECT_THAT(Pick(chain, "amd_gpu_gfx90a"), Optional(std::string("first")));
  EXPECT_THAT(Pick(chain, "amd_gpu_gfx942"), Optional(std::string("second")));
}

TEST(ArchChainTest, NoOtherwiseMeansNoVariant) {
  ArchChain chain = MustParse("if_architecture_is(x86_64): cpu;");
  EXPECT_THAT(Pick(chain, "x86_64"), Optional(std::string("cpu")));
  EXPECT_EQ(Pick(chain, "intel_gpu_pvc"), std::nullopt);
}

TEST(ArchChainTest, AliasesAndSameDevicesMatch) {
  ArchChain chain = MustParse(
      "if_architecture_is(intel_gpu_12_0_0): tgl;"
      "else_if_architecture_is(nvidia_gpu_sm_90a): hopper");
  EXPECT_THAT(Pick(chain, "intel_gpu_tgllp"), Optional(std::string("tgl")));
  EXPECT_THAT(Pick(chain, "__SYCL_TARGET_INTEL_GPU_TGLLP__"),
              Optional(std::string("tgl")));
  EXPECT_THAT(Pick(chain, "nvidia_gpu_sm_90"), Optional(std::string("hopper")));
  EXPECT_EQ(Pick(chain, "nvidia_gpu_sm_89"), std::nullopt);
}

TEST(ArchChainTest, ToStringIsCanonical) {
  EXPECT_EQ(MustParse("  if_architecture_is( intel_gpu_9_0_9 ,x86_64 ):a ;"
                      "otherwise :ns::b ;")
                .ToString(),
            "if_architecture_is(intel_gpu_skl, x86_64): a; otherwise: ns::b");
  EXPECT_EQ(MustParse(kChain).ToString(),
            "if_architecture_is(intel_gpu_pvc, nvidia_gpu_sm_90): v1; "
            "else_if_architecture_is(amd_gpu_gfx90a): v2; otherwise: v3");
}

TEST(ArchChainTest, SelectRejectsUnknownDevice) {
  absl::StatusOr<std::optional<std::string>> v =
      MustParse(kChain).Select("nvidia_gpu_sm_100");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound);
}

struct BadChain {
  const char* text;
  const char* error;
};

TEST(ArchChainTest, ErrorsNameLineAndColumn) {
  const BadChain cases[] = {
      {"", "1:1: empty chain"},
      {"if_architecture_is(intel_gpu_pcv): a",
       "1:20: unknown SYCL architecture 'intel_gpu_pcv'; nearest: "
       "intel_gpu_pvc"},
      {"if_architecture_is(x86_64): a;\n  else_if_architecture_is(gfx90a): b",
       "2:27: unknown SYCL architecture 'gfx90a'; nearest: amd_gpu_gfx90a"},
      {"else_if_architecture_is(x86_64): a",
       "1:1: expected if_architecture_is, found 'else_if_architecture_is'"},
      {"otherwise: a", "1:1: expected if_architecture_is, found 'otherwise'"},
      {"if_architecture_is(x86_64): a; if_architecture_is(x86_64): b",
       "1:32: expected else_if_architecture_is or otherwise, found "
       "'if_architecture_is'"},
      {"if_architecture_is(x86_64): a; otherwise: b; "
       "else_if_architecture_is(amd_gpu_gfx90a): c",
       "1:46: 'otherwise' must be the last clause"},
      {"if_architecture_is x86_64: a",
       "1:20: expected '(' after if_architecture_is"},
      {"if_architecture_is(): a", "1:20: expected an architecture name"},
      {"if_architecture_is(x86_64 amd_gpu_gfx90a): a",
       "1:27: expected ',' or ')', found 'a'"},
      {"if_architecture_is(x86_64) a", "1:28: expected ':'"},
      {"if_architecture_is(x86_64):", "1:28: expected a variant name"},
      {"if_architecture_is(x86_64): a b", "1:31: expected ';' between"},
  };
  for (const BadChain& c : cases) {
    absl::StatusOr<ArchChain> chain = ArchChain::Parse(c.text);
    ASSERT_FALSE(chain.ok()) << c.text;
    EXPECT_EQ(chain.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(chain.status().message(), HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace ctxsel::sycl
