#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/selector.h"

namespace ctxsel::selector {
namespace {

using ::testing::HasSubstr;

TEST(ExplainTest, ReportsEveryCandidate) {
  Context ctx;
  AddConstruct(ctx, "parallel");
  ctx.device.arch = {"nvptx"};
  std::vector<Candidate> candidates = {
      {"amd", *Selector::Parse("device={arch(amdgcn)}")},
      {"big", *Selector::Parse("user={condition(score(50): N > 1000)}")},
      {"par", *Selector::Parse("construct={parallel}")},
      {"late", *Selector::Parse("user={condition(N > 0)}")},
  };
  absl::StatusOr<Resolution> r = Resolve(candidates, ctx);
  ASSERT_TRUE(r.ok());
  Explanation e = Explain(*r, {{"N", 10}}, {});
  EXPECT_EQ(e.selection.index, 2);
  ASSERT_EQ(e.candidates.size(), 4u);
  EXPECT_FALSE(e.candidates[0].compatible);
  EXPECT_EQ(e.candidates[0].reason, "device.arch: amdgcn not in {nvptx}");
  EXPECT_TRUE(e.candidates[1].evaluated);
  EXPECT_FALSE(e.candidates[1].compatible);
  EXPECT_EQ(e.candidates[1].reason, "user.condition(N > 1000): false");
  EXPECT_EQ(e.candidates[1].score, 51u);
  EXPECT_TRUE(e.candidates[2].selected);
  EXPECT_EQ(e.candidates[2].score, 2u);
  EXPECT_EQ(e.candidates[2].terms[0].trait, "construct.parallel@1");
  EXPECT_FALSE(e.candidates[3].evaluated);
  EXPECT_FALSE(e.candidates[3].in_dynamic_prefix);
  std::string text = e.ToText();
  EXPECT_THAT(text, HasSubstr("selected: par (score 2)"));
  EXPECT_THAT(text, HasSubstr("not compatible: device.arch: amdgcn not in"));
  EXPECT_THAT(text, HasSubstr("score 2 = 1 + construct.parallel@1=1"));
  // A failed dynamic candidate keeps the score it was ranked by.
  EXPECT_THAT(text, HasSubstr("not compatible: user.condition(N > 1000): "
                              "false\n    score 51 = 1 + "
                              "user.condition.score=50, rank 1"));
}

TEST(ExplainTest, StrictSubsetIsNamed) {
  Context ctx;
  ctx.device.kind = {"gpu"};
  ctx.device.isa = {"x"};
  absl::StatusOr<Resolution> r =
      Resolve({{"a", *Selector::Parse("device={kind(gpu)}")},
               {"b", *Selector::Parse("device={kind(gpu), isa(x)}")}},
              ctx);
  ASSERT_TRUE(r.ok());
  Explanation e = Explain(*r, {}, {});
  EXPECT_EQ(e.candidates[0].score, 0u);
  EXPECT_EQ(e.candidates[0].subset_of, "b");
  EXPECT_THAT(e.ToText(), HasSubstr("strict subset of b"));
  EXPECT_EQ(e.selection.index, 1);
}

TEST(ExplainTest, BaseFunction) {
  absl::StatusOr<Resolution> r =
      Resolve({{"a", *Selector::Parse("user={condition(M)}")}}, Context());
  ASSERT_TRUE(r.ok());
  Explanation e = Explain(*r, {}, {});
  EXPECT_TRUE(e.selection.base());
  EXPECT_EQ(e.candidates[0].reason, "user.condition(M): unknown variable M");
  EXPECT_THAT(e.ToText(), HasSubstr("selected: base function"));
}

// Explain reports the Selection it is given (the one Select made, with a
// request's shared condition verdicts), never a second verdict of its own:
// which candidate won, which were evaluated and which are runtime-only.
TEST(ExplainTest, ReportsTheSelectionItIsGiven) {
  Context ctx;
  AddConstruct(ctx, "parallel");
  std::vector<Candidate> candidates = {
      {"plain", *Selector::Parse("construct={parallel}")},
      {"rt", *Selector::Parse("user={condition(score(100): use_fast(x))}")},
      {"dyn", *Selector::Parse("user={condition(score(50): N > 10)}")},
  };
  absl::StatusOr<Resolution> r = Resolve(candidates, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int64_t n : {1, 11}) {
    const Variables vars = {{"N", n}};
    ConditionVerdicts verdicts;
    const Selection pick = Select(*r, vars, {}, &verdicts);
    const Explanation e = Explain(*r, pick, vars, {});
    EXPECT_EQ(e.selection.index, pick.index);
    int evaluated = 0;
    for (int i = 0; i < static_cast<int>(e.candidates.size()); ++i) {
      const CandidateReport& c = e.candidates[i];
      EXPECT_EQ(c.selected, i == pick.index) << c.name;
      EXPECT_EQ(c.runtime_only, std::count(pick.runtime_only.begin(),
                                           pick.runtime_only.end(), i) > 0)
          << c.name;
      evaluated += c.evaluated;
    }
    EXPECT_EQ(evaluated, pick.evaluated);
  }
  // Given a selection, it is that one that is reported, not one walked again.
  Selection given = Select(*r, {{"N", 11}}, {});
  ASSERT_EQ(given.index, 2);
  const Explanation e = Explain(*r, given, {{"N", 1}}, {});
  EXPECT_TRUE(e.candidates[2].selected);
  EXPECT_EQ(e.selection.index, 2);
}

}  // namespace
}  // namespace ctxsel::selector
