// Parse, validation errors (with positions), canonical text, effective
// selectors.
#include "selector/selector.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::selector {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Canonical(absl::string_view text,
                      Directive d = Directive::kDeclareVariant) {
  absl::StatusOr<Selector> s = Selector::Parse(text, d);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.ok() ? s->ToString() : "";
}

std::string Error(absl::string_view text,
                  Directive d = Directive::kDeclareVariant) {
  absl::StatusOr<Selector> s = Selector::Parse(text, d);
  EXPECT_FALSE(s.ok()) << text << " parsed as " << s->ToString();
  if (!s.ok()) {
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  }
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(ParseTest, EveryGrammarForm) {
  EXPECT_EQ(Canonical("construct={teams,parallel,for}"),
            "construct={teams, parallel, for}");
  EXPECT_EQ(Canonical("construct={target, do}"), "construct={target, for}");
  EXPECT_EQ(Canonical("device={kind(gpu,nohost), arch(nvptx), isa(\"sm_70\")}"),
            "device={kind(gpu, nohost), arch(nvptx), isa(sm_70)}");
  EXPECT_EQ(Canonical("device={isa(\"core-avx512\")}"),
            "device={isa(\"core-avx512\")}");
  EXPECT_EQ(Canonical("implementation={vendor(score(5): llvm), "
                      "extension(match_any, foo(a, 1, \"x\"))}"),
            "implementation={vendor(score(5): llvm), "
            "extension(foo(a,1,x), match_any)}");
  EXPECT_EQ(Canonical("implementation={requires(unified_shared_memory, "
                      "atomic_default_mem_order(seq_cst))}"),
            "implementation={requires(atomic_default_mem_order(seq_cst), "
            "unified_shared_memory)}");
  EXPECT_EQ(Canonical("implementation={atomic_default_mem_order(acq_rel)}"),
            "implementation={requires(atomic_default_mem_order(acq_rel))}");
  EXPECT_EQ(Canonical("user={condition(N > 32 && M % 2 == 0)}"),
            "user={condition(N > 32 && M % 2 == 0)}");
  EXPECT_EQ(Canonical("target_device={device_num(1+1), kind(gpu)}"),
            "target_device={device_num(2), kind(gpu)}");
  EXPECT_EQ(Canonical("construct={simd(simdlen(8), aligned(b, a : 64), "
                      "linear(i), uniform(n), notinbranch)}"),
            "construct={simd(simdlen(8), aligned(a:64), aligned(b:64), "
            "linear(i), uniform(n), notinbranch)}");
}

TEST(ParseTest, WhitespaceAndCommentsAreFree) {
  EXPECT_EQ(Canonical("device = { // the device\n"
                      "  kind( /* any gpu */ gpu )\n}"),
            "device={kind(gpu)}");
}

TEST(ParseTest, CanonicalIsOrderInsensitiveWhereSetsAreUnordered) {
  absl::StatusOr<Selector> a =
      Selector::Parse("user={condition(1)}, device={isa(b, a), kind(cpu)}");
  absl::StatusOr<Selector> b =
      Selector::Parse("device={kind(cpu), isa(a, b)}, user={condition(2)}");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*Selector::Parse("construct={teams, parallel}"),
            *Selector::Parse("construct={parallel, teams}"));
  EXPECT_EQ(a->ToString(),
            "device={kind(cpu), isa(a, b)}, "
            "user={condition(true)}");
}

TEST(ParseTest, CanonicalTextParsesToItself) {
  for (const char* text :
       {"construct={simd(simdlen(4), aligned(p), inbranch)}",
        "user={condition(score(3): a ? b : c - -1)}",
        "user={condition((a || b) && !c)}",
        "target_device={device_num(n * (2 + k)), isa(\"x-y\")}",
        "implementation={extension(f(g(h)))}",
        // Found by the fuzzer: strings inside extensions keep their quotes.
        "implementation={extension(f(g, \")x\", 1))}",
        "device={isa(\"a(b\", \"10\")}",
        // Constants that fold to INT64_MIN, alone and negated.
        "user={condition(N + (-9223372036854775807 - 1))}",
        "user={condition(N + -(-9223372036854775807 - 1))}"}) {
    std::string once = Canonical(text);
    EXPECT_EQ(Canonical(once), once) << text;
  }
}

// A stored selector must always parse again: its canonical text may not nest
// deeper than what the user wrote (kMaxNestingDepth counts the user's text).
TEST(ParseTest, CanonicalTextNestsNoDeeperThanTheInput) {
  auto condition = [](const std::string& expression) {
    return "user={condition(" + expression + ")}";
  };
  auto repeat = [](const std::string& unit, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += unit;
    return out;
  };
  const std::string deepest_unary(kMaxNestingDepth - 2, '-');
  for (const std::string& text : {
           // Found by the fuzzer: 33 minus signs printed as -(-(...)).
           condition("N >" + std::string(33, '-') + " N > 0"),
           condition(deepest_unary + "N"),
           condition(std::string(kMaxNestingDepth - 2, '!') + "N"),
           condition(repeat("-!", (kMaxNestingDepth - 2) / 2) + "N"),
           condition(repeat("- ", kMaxNestingDepth - 2) + "N"),
           condition("N > 0 ? " + deepest_unary.substr(2) + "N : 1"),
           // Right-nested binary and ternary chains keep only the
           // parentheses the user wrote.
           condition(repeat("N - (", 30) + "N" + std::string(30, ')')),
           condition(repeat("N ? 1 : ", 60) + "0"),
       }) {
    std::string once = Canonical(text);
    EXPECT_EQ(Canonical(once), once) << text;
  }
}

TEST(ParseTest, StaticAndDynamic) {
  EXPECT_FALSE(Selector::Parse("user={condition(3 > 2)}")->is_dynamic());
  EXPECT_TRUE(Selector::Parse("user={condition(N > 2)}")->is_dynamic());
  EXPECT_TRUE(Selector::Parse("target_device={kind(gpu)}")->is_dynamic());
  EXPECT_FALSE(Selector::Parse("device={kind(gpu)}")->is_dynamic());
}

struct ErrorCase {
  const char* text;
  const char* error;  // expected prefix of the message
  Directive directive = Directive::kDeclareVariant;
};

class ValidationTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ValidationTest, ReportsPositionAndReason) {
  EXPECT_THAT(Error(GetParam().text, GetParam().directive),
              StartsWith(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ValidationTest,
    testing::Values(
        ErrorCase{"devce={kind(gpu)}", "1:1: unknown trait set 'devce'"},
        ErrorCase{"device={knd(gpu)}",
                  "1:9: unknown trait selector 'knd' in the device"},
        ErrorCase{"construct={loop}", "1:12: unknown construct 'loop'"},
        ErrorCase{"device={kind(gpu)}, device={arch(x)}",
                  "1:21: trait set 'device' given twice (first at 1:1)"},
        ErrorCase{"device={kind(gpu), kind(cpu)}",
                  "1:20: trait selector 'kind' given twice"},
        ErrorCase{"device={isa(a, b, a)}", "1:19: property 'a' given twice"},
        ErrorCase{"device={kind(score(2): gpu)}",
                  "1:14: score() is not allowed in the device trait set"},
        ErrorCase{"construct={parallel(score(1):)}",
                  "1:21: score() is not allowed in the construct"},
        ErrorCase{"target_device={kind(score(1): gpu)}",
                  "1:21: score() is not allowed in the target_device"},
        ErrorCase{"device={kind(any, host)}",
                  "1:19: kind(any) cannot be combined with host"},
        ErrorCase{"device={kind(nohost, any)}",
                  "1:14: kind(any) cannot be combined with nohost"},
        ErrorCase{"device={kind(any), arch(x86_64)}",
                  "1:20: kind(any) excludes every other trait selector"},
        ErrorCase{"device={kind}", "1:9: kind requires at least one property"},
        ErrorCase{"device={arch()}", "1:9: arch requires at least one"},
        ErrorCase{"device={isa}", "1:9: isa requires at least one"},
        ErrorCase{"implementation={requires}", "1:17: requires requires at"},
        ErrorCase{"implementation={atomic_default_mem_order(seq_cst, relaxed)}",
                  "1:51: atomic_default_mem_order takes exactly one"},
        ErrorCase{"implementation={atomic_default_mem_order(weird)}",
                  "1:42: unknown atomic_default_mem_order property 'weird'"},
        ErrorCase{"implementation={requires(atomic_default_mem_order(x))}",
                  "1:51: unknown atomic_default_mem_order property 'x'"},
        ErrorCase{"implementation={requires(atomic_default_mem_order)}",
                  "1:26: atomic_default_mem_order takes exactly one of"},
        ErrorCase{"implementation={requires(unified_address(x))}",
                  "1:42: unified_address takes no arguments"},
        // An integer is not a name; a string literal is not a clause.
        ErrorCase{"device={isa(1)}",
                  "1:13: expected a property name (an identifier or a "
                  "string), found '1'"},
        ErrorCase{"target_device={arch(64)}", "1:21: expected a property name"},
        ErrorCase{"implementation={vendor(llvm, 2)}",
                  "1:30: expected a property name"},
        ErrorCase{"implementation={requires(\"unified_address\")}",
                  "1:26: expected a requires clause, found "
                  "\"unified_address\""},
        ErrorCase{"implementation={requires(1)}",
                  "1:26: expected a requires clause, found '1'"},
        ErrorCase{"implementation={atomic_default_mem_order(\"seq_cst\")}",
                  "1:42: expected an argument of atomic_default_mem_order, "
                  "found \"seq_cst\""},
        ErrorCase{"implementation={requires(atomic_default_mem_order("
                  "\"seq_cst\"))}",
                  "1:51: expected an argument of atomic_default_mem_order"},
        // The 5.0 spellings are requires properties: no repeats, one score.
        ErrorCase{"implementation={requires(unified_address), "
                  "unified_address}",
                  "1:44: property 'unified_address' given twice in requires "
                  "(first at 1:26)"},
        ErrorCase{"implementation={atomic_default_mem_order(score(1): "
                  "seq_cst), requires(score(2): atomic_default_mem_order("
                  "acq_rel))}",
                  "1:81: property 'atomic_default_mem_order' given twice in "
                  "requires (first at 1:17)"},
        ErrorCase{"implementation={requires(unified_memory)}",
                  "1:26: unknown requires property 'unified_memory'"},
        ErrorCase{"user={condition}", "1:7: condition requires an expression"},
        ErrorCase{"user={condition(a, b)}",
                  "1:20: condition takes exactly one expression"},
        ErrorCase{"device={device_num(1)}",
                  "1:9: 'device_num' is not allowed in the device trait set"},
        ErrorCase{"target_device={device_num(1, 2)}",
                  "1:30: device_num takes exactly one expression"},
        ErrorCase{"user={condition(score(-1): 1)}",
                  "1:23: score must be non-negative, got -1"},
        ErrorCase{"user={condition(score(N): 1)}",
                  "1:23: score must be a constant expression"},
        ErrorCase{"device={kind(gpu)", "1:8: unbalanced brackets: missing '}'"},
        ErrorCase{"device={kind(gpu}",
                  "1:17: unbalanced brackets: expected ')'"},
        ErrorCase{"device={kind(gpu)}}", "1:19: unbalanced brackets"},
        ErrorCase{"device={kind(gpu)} extra",
                  "1:20: trailing text 'extra' after the context selector"},
        ErrorCase{"", "1:1: empty context selector"},
        ErrorCase{"  // nothing\n", "2:1: empty context selector"},
        ErrorCase{"device={}", "1:8: empty trait set 'device'"},
        ErrorCase{"user={condition(1/0)}",
                  "1:17: division by zero in constant expression"},
        ErrorCase{"user={condition(9223372036854775807 + 1)}",
                  "1:17: integer overflow in constant expression"},
        ErrorCase{"user={condition(99999999999999999999)}",
                  "1:17: integer literal"},
        ErrorCase{"construct={simd}", "1:12: construct={simd} is not allowed",
                  Directive::kBeginDeclareVariant},
        ErrorCase{"construct={simd(simdlen(4))}",
                  "1:17: simd takes no properties in a metadirective",
                  Directive::kMetadirective},
        ErrorCase{"construct={simd(inbranch, notinbranch)}",
                  "1:27: inbranch and notinbranch exclude each other "
                  "(first at 1:17)"},
        // declare simd: at most one uniform or linear clause per argument,
        // at most one aligned clause; the error points at the repeat.
        ErrorCase{"construct={simd(uniform(a), linear(a))}",
                  "1:36: variable 'a' appears in more than one uniform or "
                  "linear clause (first at 1:25)"},
        ErrorCase{"construct={simd(linear(i), linear(j, i:2))}",
                  "1:38: variable 'i' appears in more than one uniform or "
                  "linear clause (first at 1:24)"},
        ErrorCase{"construct={simd(aligned(a), aligned(a:8))}",
                  "1:37: variable 'a' appears in more than one aligned "
                  "clause (first at 1:25)"},
        ErrorCase{"construct={simd(linear(i:n))}",
                  "1:26: linear step 'n' is not in a uniform clause"},
        ErrorCase{"construct={simd(linear(i:n + 1), uniform(n))}",
                  "1:26: linear step must be an integer constant or a uniform "
                  "variable, got 'n + 1'"},
        ErrorCase{"construct={simd(aligned(a:0))}",
                  "1:27: aligned needs a positive constant, got '0'"},
        // score without its parentheses: the error points at `score`.
        ErrorCase{"implementation={vendor(score: llvm)}",
                  "1:24: score needs its expression in parentheses: "
                  "score(expression):"},
        ErrorCase{"user={condition(score 2: N)}",
                  "1:17: score needs its expression in parentheses"},
        ErrorCase{"construct={simd(simdlen(0))}",
                  "1:25: simdlen must be a positive constant"},
        ErrorCase{"construct={simd(vectorlength(4))}",
                  "1:17: unknown simd clause 'vectorlength'"},
        ErrorCase{"construct={target(x)}",
                  "1:19: construct selector 'target' takes no properties"},
        ErrorCase{"device={kind(fast)}", "1:14: unknown kind property 'fast'"},
        ErrorCase{"device={arch(f(x))}", "1:14: 'f(x)' is not a name"},
        ErrorCase{"device=kind(gpu)", "1:8: expected '{'"},
        ErrorCase{"device={kind(gpu)} $", "1:20: unexpected character '$'"},
        ErrorCase{"user={condition(\"x)}", "1:17: unterminated string"},
        ErrorCase{"device={kind(gpu)} /* x", "1:20: unterminated comment"},
        ErrorCase{"user={condition(a ? b)}", "1:22: expected ':' of '?:'"}));

TEST(RequirementTest, FiveZeroSpellingsAreRequiresProperties) {
  // OpenMP 5.0 wrote the requires clauses as implementation selectors; one
  // meaning, 5.2's requires(...) the canonical form.
  for (const char* clause : {"unified_address", "unified_shared_memory",
                             "reverse_offload", "dynamic_allocators"}) {
    EXPECT_EQ(Canonical(absl::StrCat("implementation={", clause, "}")),
              absl::StrCat("implementation={requires(", clause, ")}"));
  }
  EXPECT_EQ(Canonical("implementation={vendor(gnu), unified_address, "
                      "requires(reverse_offload), dynamic_allocators}"),
            "implementation={vendor(gnu), requires(dynamic_allocators, "
            "reverse_offload, unified_address)}");
  // A spelling's score is its own (issue 26: it was given to
  // unified_address too).
  EXPECT_EQ(Canonical("implementation={atomic_default_mem_order(score(3): "
                      "seq_cst), unified_address}"),
            "implementation={requires(unified_address), "
            "atomic_default_mem_order(score(3): seq_cst)}");
  EXPECT_EQ(
      *Selector::Parse("implementation={unified_shared_memory}"),
      *Selector::Parse("implementation={requires(unified_shared_memory)}"));
  // Integers stay valid inside an extension's arguments.
  EXPECT_EQ(Canonical("implementation={extension(f(1, \"x\"))}"),
            "implementation={extension(f(1,x))}");
}

TEST(SimdTest, UniformOrLinearArgumentMayAlsoBeAligned) {
  // GCC's tests use this form; the restriction is on uniform and linear.
  absl::StatusOr<Selector> s =
      Selector::Parse("construct={simd(uniform(a), aligned(a:64))}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "construct={simd(aligned(a:64), uniform(a))}");
  EXPECT_TRUE(
      Selector::Parse("construct={simd(linear(p:4), aligned(p:32))}").ok());
}

TEST(SimdTest, LinearSteps) {
  // Step 1 is the default; negative and zero steps are integer constants
  // too; a variable step must be uniform (OpenMP 5.2).
  EXPECT_EQ(Canonical("construct={simd(linear(i:1), linear(j))}"),
            "construct={simd(linear(i, j))}");
  EXPECT_EQ(Canonical("construct={simd(linear(k:n), linear(i:2), uniform(n), "
                      "linear(m:-1), linear(z:0), linear(j:2))}"),
            "construct={simd(linear(m:-1), linear(z:0), linear(i, j:2), "
            "linear(k:n), uniform(n))}");
  EXPECT_EQ(Canonical("construct={simd(linear(i:2*3))}"),
            "construct={simd(linear(i:6))}");
}

TEST(ValidationTest, SizeAndNestingLimits) {
  std::string big =
      "user={condition(" + std::string(kMaxSelectorBytes, ' ') + "1)}";
  EXPECT_THAT(Error(big), HasSubstr("the limit is 65536"));
  std::string deep = "user={condition(" + std::string(200, '(') + "1" +
                     std::string(200, ')') + ")}";
  EXPECT_THAT(Error(deep), HasSubstr("nesting too deep"));
  std::string deep_ext = "implementation={extension(";
  for (int i = 0; i < 100; ++i) deep_ext += "f(";
  deep_ext += std::string(101, ')') + "}";
  EXPECT_THAT(Error(deep_ext), HasSubstr("nested too deep"));
  std::string long_chain = "user={condition(N";
  for (int i = 0; i < 300; ++i) long_chain += " + N";
  EXPECT_THAT(Error(long_chain + ")}"), HasSubstr("expression too deep"));
}

TEST(EffectiveSelectorTest, AppendsOuterSelectorsWithoutDuplicates) {
  Selector outer =
      *Selector::Parse("device={kind(gpu)}, implementation={vendor(llvm)}",
                       Directive::kBeginDeclareVariant);
  Selector inner = *Selector::Parse(
      "device={kind(gpu), arch(nvptx)}, "
      "user={condition(N > 1)}");
  absl::StatusOr<Selector> e = EffectiveSelector(inner, outer);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->ToString(),
            "device={kind(gpu), arch(nvptx)}, implementation={vendor(llvm)}, "
            "user={condition(N > 1)}");
  EXPECT_TRUE(e->is_dynamic());
}

TEST(EffectiveSelectorTest, ConstructsOfTheOuterComeAfter) {
  absl::StatusOr<Selector> e =
      EffectiveSelector(*Selector::Parse("construct={parallel}"),
                        *Selector::Parse("construct={target, parallel}"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->ToString(), "construct={parallel, target}");
}

TEST(EffectiveSelectorTest, RevalidatesTheResult) {
  absl::StatusOr<Selector> e =
      EffectiveSelector(*Selector::Parse("device={kind(cpu)}"),
                        *Selector::Parse("device={kind(gpu)}"));
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(),
              HasSubstr("trait selector 'kind' given twice"));
  EXPECT_THAT(e.status().message(), HasSubstr("effective selector"));
  e = EffectiveSelector(*Selector::Parse("device={arch(x86_64)}"),
                        *Selector::Parse("device={kind(any)}"));
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("kind(any) excludes"));
}

TEST(SelectorTest, HasTargetDeviceIsTheSetNotTheText) {
  EXPECT_TRUE(
      Selector::Parse("target_device={kind(gpu)}")->has_target_device());
  EXPECT_TRUE(Selector::Parse("device={kind(gpu)}, target_device={"
                              "device_num(-1), kind(host)}")
                  ->has_target_device());
  EXPECT_FALSE(Selector::Parse("device={kind(gpu)}")->has_target_device());
  // A string property that spells the set's name is not the set.
  absl::StatusOr<Selector> text =
      Selector::Parse("implementation={extension(\"target_device={x}\")}");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(text->ToString(), HasSubstr("target_device="));
  EXPECT_FALSE(text->has_target_device());
  // An effective selector has it when the outer one does.
  absl::StatusOr<Selector> e =
      EffectiveSelector(*Selector::Parse("device={kind(gpu)}"),
                        *Selector::Parse("target_device={arch(nvptx)}",
                                         Directive::kBeginDeclareVariant));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->has_target_device());
}

TEST(DirectiveTest, NamesRoundTrip) {
  for (Directive d :
       {Directive::kDeclareVariant, Directive::kBeginDeclareVariant,
        Directive::kMetadirective}) {
    EXPECT_EQ(*ParseDirective(DirectiveName(d)), d);
  }
  EXPECT_FALSE(ParseDirective("pragma").ok());
}

}  // namespace
}  // namespace ctxsel::selector

// Issue 26: requirements with scores of their own (5.0 spellings) stay
// apart, in one canonical text whatever the order they are written in.
namespace ctxsel::selector {
namespace {

TEST(RequirementTest, ScoredSpellingsKeepTheirScoresInOneCanonicalForm) {
  struct Case {
    std::vector<const char*> texts;  // equivalent spellings
    const char* canonical;
  } cases[] = {
      {{"implementation={requires(reverse_offload), "
        "atomic_default_mem_order(score(3): seq_cst)}",
        "implementation={atomic_default_mem_order(score(3): seq_cst), "
        "reverse_offload}"},
       "implementation={requires(reverse_offload), "
       "atomic_default_mem_order(score(3): seq_cst)}"},
      {{"implementation={atomic_default_mem_order(score(1): seq_cst), "
        "requires(score(2): unified_address)}",
        "implementation={requires(score(2): unified_address), "
        "atomic_default_mem_order(score(1): seq_cst)}",
        "implementation={unified_address(score(2):), "
        "atomic_default_mem_order(score(1): seq_cst)}"},
       "implementation={atomic_default_mem_order(score(1): seq_cst), "
       "unified_address(score(2):)}"},
      {{"implementation={requires(score(2): reverse_offload, "
        "unified_address), dynamic_allocators, unified_shared_memory}",
        "implementation={unified_shared_memory, requires(score(2): "
        "unified_address, reverse_offload), dynamic_allocators}"},
       "implementation={requires(score(2): reverse_offload, "
       "unified_address), dynamic_allocators, unified_shared_memory}"},
  };
  for (const Case& c : cases) {
    for (const char* text : c.texts) {
      absl::StatusOr<Selector> s = Selector::Parse(text);
      ASSERT_TRUE(s.ok()) << text << ": " << s.status();
      EXPECT_EQ(s->ToString(), c.canonical) << text;
      absl::StatusOr<Selector> again = Selector::Parse(s->ToString());
      ASSERT_TRUE(again.ok()) << s->ToString() << ": " << again.status();
      EXPECT_EQ(again->ToString(), c.canonical);
    }
  }
}

}  // namespace
}  // namespace ctxsel::selector
