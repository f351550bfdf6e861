#include "client/cli/eval_kernel.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

KernelVariant Variant(const std::string& kernel, const std::string& name) {
  return {
      kernel,
      {name, *selector::Selector::Parse("device={kind(gpu)}",
                                        selector::Directive::kDeclareVariant)}};
}

std::vector<std::string> Names(const std::vector<selector::Candidate>& in) {
  std::vector<std::string> out;
  for (const selector::Candidate& c : in) out.push_back(c.name);
  return out;
}

TEST(ChooseKernelTest, RequestedWinsElseTheOneNamedElseNone) {
  const std::vector<KernelVariant> two = {Variant("saxpy", "a"),
                                          Variant("gemm", "b")};
  EXPECT_EQ(*ChooseKernel("gemm", two), "gemm");
  EXPECT_EQ(*ChooseKernel("", {Variant("saxpy", "a"), Variant("", "b")}),
            "saxpy");
  EXPECT_EQ(*ChooseKernel("", {Variant("", "a")}), "");
  EXPECT_EQ(*ChooseKernel("", {}), "");
  // Nothing to compare against: the request stands.
  EXPECT_EQ(*ChooseKernel("axpy", {}), "axpy");
}

TEST(ChooseKernelTest, AmbiguousOrMissingKernelIsInvalid) {
  const std::vector<KernelVariant> two = {Variant("saxpy", "a"),
                                          Variant("gemm", "b")};
  absl::StatusOr<std::string> k = ChooseKernel("", two);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(k.status().message(),
            "the variants belong to several kernels (gemm, saxpy): choose one "
            "with --kernel or \"kernel\"");
  k = ChooseKernel("axpy", two);
  EXPECT_EQ(k.status().message(),
            "kernel 'axpy' has no variants (the variants are for gemm, saxpy)");
}

TEST(CandidatesOfTest, KeepsTheKernelsAndTheUnnamedInOrder) {
  std::vector<KernelVariant> all = {Variant("gemm", "g1"), Variant("", "u"),
                                    Variant("saxpy", "s"),
                                    Variant("gemm", "g2")};
  EXPECT_EQ(Names(CandidatesOf("gemm", all)),
            (std::vector<std::string>{"g1", "u", "g2"}));
  EXPECT_EQ(Names(CandidatesOf("", all)), (std::vector<std::string>{"u"}));
}

}  // namespace
}  // namespace ctxsel::cli
