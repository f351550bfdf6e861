// Runtime-only conditions (issue 14 item 6): `condition()` expressions the
// service cannot evaluate are kept as opaque text that only the program
// decides; the service never chooses such a candidate.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/ast.h"
#include "selector/matcher.h"
#include "selector/selector.h"

namespace ctxsel::selector {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Selector Parse(absl::string_view text) {
  absl::StatusOr<Selector> s = Selector::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.ok() ? *s : *Selector::Parse("user={condition(1)}");
}

const internal::Expression& Condition(const Selector& s) {
  return s.ast().FindSet(internal::SetId::kUser)->selectors[0].expressions[0];
}

TEST(RuntimeOnlyTest, ProgramExpressionsParseAsRuntimeOnly) {
  struct Case {
    const char* condition;
    const char* canonical;
  };
  for (const Case& c : std::vector<Case>{
           {"foo()", "foo()"},
           {"sizeof(x) > 4", "sizeof(x) > 4"},
           {"sizeof x", "sizeof x"},
           {"s.n > 3", "s.n > 3"},
           {"p->n", "p->n"},
           {"a[i + 1] == 2", "a[i + 1] == 2"},
           {"N > 3 && f( N , 2 )", "N > 3 && f(N, 2)"},
           {"(int)x", "(int) x"},
           {"flags & 4", "flags & 4"},
           {"1 << k", "1 << k"},
           {"~m", "~m"},
           {"sizeof( * p ) > 4", "sizeof(*p) > 4"},
           {"sizeof *p", "sizeof *p"},
           {"f(-x, - -y, &v) * *q", "f(-x, - -y, &v) * *q"},
           {"g() - -1", "g() - -1"},
           {"strcmp(name, \"gpu\") == 0", "strcmp(name, \"gpu\") == 0"},
       }) {
    std::string text = absl::StrCat("user={condition(", c.condition, ")}");
    Selector s = Parse(text);
    EXPECT_TRUE(Condition(s).runtime_only()) << c.condition;
    EXPECT_FALSE(Condition(s).constant()) << c.condition;
    EXPECT_TRUE(s.is_dynamic()) << c.condition;
    std::string canonical = absl::StrCat("user={condition(", c.canonical, ")}");
    EXPECT_EQ(s.ToString(), canonical);
    // The canonical text parses again, to itself and runtime-only.
    Selector again = Parse(canonical);
    EXPECT_EQ(again.ToString(), canonical);
    EXPECT_TRUE(Condition(again).runtime_only()) << canonical;
  }
}

TEST(RuntimeOnlyTest, ServiceExpressionsAndTheirErrorsStayAsTheyWere) {
  Selector s = Parse("user={condition(N > 3 && M % 2 == 0)}");
  EXPECT_FALSE(Condition(s).runtime_only());
  EXPECT_EQ(s.ToString(), "user={condition(N > 3 && M % 2 == 0)}");
  EXPECT_FALSE(Condition(Parse("user={condition(2 > 1)}")).runtime_only());
  // A typo in the service's own language is still an error, not opaque.
  for (const char* bad :
       {"user={condition(N >)}", "user={condition(1 / 0)}",
        "user={condition(N = 3)}", "user={condition()}",
        "user={condition(f(x)}", "user={condition(a[1)]}",
        "device={device_num(f())}", "user={condition(score(f()): 1)}"}) {
    EXPECT_FALSE(Selector::Parse(bad).ok()) << bad;
  }
}

TEST(RuntimeOnlyTest, VariablesAreOnlyTheServiceExpressions) {
  Selector s = Parse(
      "user={condition(score(2): sizeof(T) > LIMIT)}, "
      "target_device={device_num(D)}");
  EXPECT_THAT(s.variables(), ElementsAre("D"));
}

TEST(RuntimeOnlyTest, MatchSaysTheProgramDecides) {
  Selector s = Parse("user={condition(foo())}");
  std::string reason;
  EXPECT_EQ(internal::MatchDynamic(s.ast(), {}, {}, &reason),
            internal::DynamicMatch::kProgramDecides);
  EXPECT_EQ(reason, "runtime-only condition(foo()): the program decides");
  // A failing service-evaluable part wins: the program cannot pick it either.
  Selector both =
      Parse("user={condition(p->n)}, target_device={device_num(D), kind(gpu)}");
  TargetDevices devices;
  devices.devices[0].kind = {"cpu"};
  EXPECT_EQ(internal::MatchDynamic(both.ast(), {{"D", 0}}, devices, &reason),
            internal::DynamicMatch::kFails);
  EXPECT_EQ(reason, "target_device.kind: gpu not in {cpu}");
  absl::StatusOr<Match> m = MatchSelector(s, Context());
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->compatible);
  EXPECT_EQ(m->reason, "runtime-only condition(foo()): the program decides");
}

TEST(RuntimeOnlyTest, RanksInTheDynamicPrefixAndIsNeverChosen) {
  Context ctx;
  AddConstruct(ctx, "parallel");
  std::vector<Candidate> candidates = {
      {"plain", Parse("construct={parallel}")},
      {"rt_high", Parse("user={condition(score(100): use_fast(x))}")},
      {"dyn", Parse("user={condition(score(50): N > 10)}")},
      {"rt_low", Parse("user={condition(score(20): s.ok)}")},
      {"rt_off", Parse("user={condition(score(30): f())}, "
                       "target_device={device_num(D)}")},
      {"rt_below", Parse("user={condition(g())}")},
  };
  absl::StatusOr<Resolution> r = Resolve(candidates, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  // rt_high(101), dyn(51), rt_off(31), rt_low(21), plain(2), rt_below(1).
  EXPECT_EQ(r->dynamic_prefix_size(), 5u);
  Selection pick = Select(*r, {{"N", 1}, {"D", 9}}, {});
  EXPECT_EQ(pick.index, 0);
  // rt_off's device_num names no device, so the program cannot pick it.
  EXPECT_THAT(pick.runtime_only, ElementsAre(1, 3));
  pick = Select(*r, {{"N", 11}}, {});
  EXPECT_EQ(pick.index, 2);
  EXPECT_THAT(pick.runtime_only, ElementsAre(1));

  Explanation e = Explain(*r, {{"N", 1}}, {});
  EXPECT_TRUE(e.candidates[1].runtime_only);
  EXPECT_FALSE(e.candidates[1].compatible);
  EXPECT_EQ(e.candidates[1].reason,
            "runtime-only condition(use_fast(x)): the program decides");
  EXPECT_FALSE(e.candidates[2].runtime_only);
  EXPECT_FALSE(e.candidates[5].evaluated);
  EXPECT_THAT(e.ToText(),
              HasSubstr("not chosen: runtime-only condition(use_fast(x)): "
                        "the program decides"));
}

TEST(RuntimeOnlyTest, NoRuntimeOnlyCandidatesNoList) {
  Context ctx;
  std::vector<Candidate> candidates = {{"a", Parse("user={condition(N > 1)}")}};
  absl::StatusOr<Resolution> r = Resolve(candidates, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Select(*r, {{"N", 2}}, {}).runtime_only, IsEmpty());
}

}  // namespace
}  // namespace ctxsel::selector
