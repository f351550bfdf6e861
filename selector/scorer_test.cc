// Score terms and the strict-subset rule.
#include "selector/scorer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/matcher.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {
namespace {

SubsetItems Items(absl::string_view text) {
  absl::StatusOr<Selector> s = Selector::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return ItemsOf(s->ast());
}

TEST(SumScoreTest, WeightsPerSpec) {
  Context ctx;
  for (const char* c : {"target", "teams", "parallel"}) AddConstruct(ctx, c);
  ctx.device.kind = {"gpu"};
  ctx.device.arch = {"a", "b"};
  ctx.device.isa = {"i"};
  ctx.implementation.vendor = {"v"};
  Selector s = *Selector::Parse(
      "construct={teams, parallel}, device={kind(gpu), arch(a, b), isa(i)},"
      " implementation={vendor(score(100): v)}, user={condition(1)}");
  StaticMatch m = MatchStatic(s.ast(), ctx);
  ASSERT_TRUE(m.compatible) << m.reason;
  absl::StatusOr<ScoreSum> sum = SumScore(s.ast(), m.construct_positions, 3);
  ASSERT_TRUE(sum.ok());
  // teams@2 = 2, parallel@3 = 4, kind 2^3, arch 2^4 (once), isa 2^5, 100.
  EXPECT_EQ(sum->sum, 2u + 4u + 8u + 16u + 32u + 100u);
  ASSERT_EQ(sum->terms.size(), 6u);
  EXPECT_EQ(sum->terms[0].trait, "construct.teams@2");
  EXPECT_EQ(sum->terms[5].trait, "implementation.vendor.score");
}

TEST(SumScoreTest, KindAnyAddsNothing) {
  Selector s = *Selector::Parse("device={kind(any)}");
  absl::StatusOr<ScoreSum> sum = SumScore(s.ast(), {}, 4);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->sum, 0u);
  EXPECT_TRUE(ItemsOf(s.ast()).items.empty());
}

TEST(StrictSubsetTest, ItemsAndOrderedConstructs) {
  EXPECT_TRUE(IsStrictSubset(Items("device={kind(gpu)}"),
                             Items("device={kind(gpu), arch(x)}")));
  EXPECT_TRUE(
      IsStrictSubset(Items("device={isa(a)}"), Items("device={isa(a, b)}")));
  EXPECT_FALSE(
      IsStrictSubset(Items("device={kind(gpu)}"), Items("device={kind(gpu)}")));
  EXPECT_FALSE(IsStrictSubset(Items("device={kind(gpu), arch(x)}"),
                              Items("device={kind(gpu)}")));
  EXPECT_TRUE(IsStrictSubset(Items("construct={parallel}"),
                             Items("construct={target, parallel}")));
  EXPECT_FALSE(IsStrictSubset(Items("construct={parallel, target}"),
                              Items("construct={target, parallel, for}")));
  // Scores are part of an item.
  EXPECT_FALSE(
      IsStrictSubset(Items("implementation={vendor(score(2): x)}"),
                     Items("implementation={vendor(x)}, user={condition(1)}")));
  // Constant conditions compare by truth value.
  EXPECT_TRUE(IsStrictSubset(Items("user={condition(2)}"),
                             Items("user={condition(1)}, device={isa(a)}")));
  EXPECT_TRUE(
      IsStrictSubset(Items("device={kind(any)}"), Items("device={isa(a)}")));
}

TEST(StrictSubsetTest, ConstructsCompareTraitByTrait) {
  // A simd with fewer clauses is a subset of one with more (GCC's reading).
  EXPECT_TRUE(IsStrictSubset(Items("construct={simd}"),
                             Items("construct={parallel, simd(simdlen(4))}")));
  EXPECT_TRUE(IsStrictSubset(Items("construct={simd}"),
                             Items("construct={simd(simdlen(4))}")));
  EXPECT_TRUE(
      IsStrictSubset(Items("construct={simd(simdlen(4))}"),
                     Items("construct={simd(simdlen(4), notinbranch)}")));
  EXPECT_TRUE(
      IsStrictSubset(Items("construct={simd(uniform(n))}"),
                     Items("construct={simd(linear(i:n), uniform(m, n))}")));
  EXPECT_FALSE(IsStrictSubset(Items("construct={simd(simdlen(8))}"),
                              Items("construct={simd(simdlen(4))}")));
  EXPECT_FALSE(IsStrictSubset(Items("construct={simd(linear(i))}"),
                              Items("construct={simd(linear(i:2))}")));
  EXPECT_FALSE(IsStrictSubset(Items("construct={simd(simdlen(4))}"),
                              Items("construct={simd, parallel}")));
  EXPECT_FALSE(IsStrictSubset(Items("construct={simd(simdlen(4))}"),
                              Items("construct={simd(simdlen(4))}")));
}

// Issue 26: a 5.0 spelling with a score of its own keeps that score to
// itself (each was its own trait selector), beside `requires(...)`.
TEST(RequiresScoresTest, A50SpellingsScoreIsItsOwn) {
  // Not given to reverse_offload: requires(reverse_offload) alone stays a
  // strict subset, and the sum counts 3 once.
  EXPECT_TRUE(
      IsStrictSubset(Items("implementation={requires(reverse_offload)}"),
                     Items("implementation={requires(reverse_offload), "
                           "atomic_default_mem_order(score(3): seq_cst)}")));
  Selector two = *Selector::Parse(
      "implementation={requires(score(2): reverse_offload), "
      "atomic_default_mem_order(score(3): seq_cst)}");
  absl::StatusOr<ScoreSum> sum = SumScore(two.ast(), {}, 0);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->sum, 5u);
  // An unscored spelling beside a scored requires(...) is not scored.
  EXPECT_TRUE(IsStrictSubset(
      Items("implementation={unified_address}"),
      Items("implementation={requires(score(2): reverse_offload), "
            "unified_address}")));
}

}  // namespace
}  // namespace ctxsel::selector::internal
