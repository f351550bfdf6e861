#include "selector/compiler_profile.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::selector {
namespace {

using ::testing::HasSubstr;

std::vector<Candidate> TwoEqual(Directive directive) {
  std::vector<Candidate> candidates;
  for (const char* name : {"v1", "v2"}) {
    absl::StatusOr<Selector> s =
        Selector::Parse("device={kind(host)}", directive);
    EXPECT_TRUE(s.ok()) << s.status();
    candidates.push_back({name, *std::move(s)});
  }
  return candidates;
}

// The first declared candidate for the spec, the last for GCC 12 and clang
// 14 (both call v2 in tests/compilers/tie.c); metadirectives keep the first.
TEST(CompilerProfileTest, TiesFollowTheCompiler) {
  Context host;
  host.device.kind = {"host"};
  struct Case {
    const char* compiler;
    Directive directive;
    const char* winner;
  } cases[] = {
      {"spec", Directive::kDeclareVariant, "v1"},
      {"gcc-12", Directive::kDeclareVariant, "v2"},
      {"clang-14", Directive::kDeclareVariant, "v2"},
      {"clang-14", Directive::kBeginDeclareVariant, "v2"},
      {"gcc-12", Directive::kMetadirective, "v1"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CompilerProfile> profile =
        CompilerProfileFromName(c.compiler);
    ASSERT_TRUE(profile.ok()) << profile.status();
    EXPECT_EQ(CompilerProfileName(*profile), c.compiler);
    absl::StatusOr<Resolution> r = Resolve(
        TwoEqual(c.directive), host, ResolveOptionsFor(*profile, c.directive));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->candidates().size(), 2u);
    EXPECT_EQ(r->declared()[r->candidates()[0].index].name, c.winner)
        << c.compiler;
  }
}

// The winner among `variants` (name=selector) in a host context with
// `constructs`, for `compiler`; "base" for the base function.
std::string Winner(const char* compiler, std::vector<std::string> constructs,
                   std::vector<std::pair<std::string, std::string>> variants,
                   Directive directive = Directive::kDeclareVariant,
                   TieChoice ties = TieChoice::kCompilerDefault) {
  Context context;
  for (const std::string& c : constructs) AddConstruct(context, c);
  context.device.kind = {"host", "cpu"};
  context.device.arch = {"x86_64"};
  std::vector<Candidate> candidates;
  for (const auto& [name, text] : variants) {
    absl::StatusOr<Selector> s = Selector::Parse(text, directive);
    EXPECT_TRUE(s.ok()) << s.status();
    candidates.push_back({name, *std::move(s)});
  }
  absl::StatusOr<CompilerProfile> profile = CompilerProfileFromName(compiler);
  EXPECT_TRUE(profile.ok()) << profile.status();
  absl::StatusOr<Resolution> r = Resolve(
      candidates, context, ResolveOptionsFor(*profile, directive, ties));
  EXPECT_TRUE(r.ok()) << r.status();
  Selection pick = Select(*r, {}, TargetDevicesView());
  return pick.base() ? "base" : r->declared()[pick.index].name;
}

// The programs of tests/compilers, one deviation each; the real compilers'
// answers are checked there.
TEST(CompilerProfileTest, EachDeviationAsTheCompilersShowIt) {
  const std::vector<std::pair<std::string, std::string>> par_for = {
      {"vpar", "construct={parallel}"}, {"vfor", "construct={for}"}};
  // positions.c: GCC 12 counts from the innermost.
  EXPECT_EQ(Winner("spec", {"parallel", "for"}, par_for), "vfor");
  EXPECT_EQ(Winner("gcc-12", {"parallel", "for"}, par_for), "vpar");
  EXPECT_EQ(Winner("clang-14", {"parallel", "for"}, par_for), "vfor");
  // lowest_embedding.c: clang 14 takes a repeated construct's lowest
  // position; GCC 12's innermost count makes that its highest-valued.
  EXPECT_EQ(Winner("spec", {"parallel", "for", "parallel"}, par_for), "vpar");
  EXPECT_EQ(Winner("clang-14", {"parallel", "for", "parallel"}, par_for),
            "vfor");
  EXPECT_EQ(Winner("gcc-12", {"parallel", "for", "parallel"}, par_for), "vpar");
  // simd_base.c: GCC 12 calls the base function, not the next best.
  const std::vector<std::pair<std::string, std::string>> simd = {
      {"vpar", "construct={parallel}"},
      {"vsimd", "construct={parallel, for, simd}"}};
  EXPECT_EQ(Winner("spec", {"parallel", "for", "simd"}, simd), "vsimd");
  EXPECT_EQ(Winner("gcc-12", {"parallel", "for", "simd"}, simd), "base");
  // outside_target.c: the texts' construct set ends at target.
  const std::vector<std::pair<std::string, std::string>> target = {
      {"vt", "construct={target}"}, {"vpt", "construct={parallel, target}"}};
  EXPECT_EQ(Winner("spec", {"parallel", "target"}, target), "vt");
  EXPECT_EQ(Winner("gcc-12", {"parallel", "target"}, target), "vt");
  EXPECT_EQ(Winner("clang-14", {"parallel", "target"}, target), "vpt");
  // l_from_selector.c.
  const std::vector<std::pair<std::string, std::string>> l = {
      {"vfor", "construct={for}"}, {"vkind", "device={kind(host)}"}};
  EXPECT_EQ(Winner("spec", {"parallel", "for"}, l), "vkind");
  EXPECT_EQ(Winner("clang-14", {"parallel", "for"}, l), "vfor");
  // kind_properties.c: 1 + 1 + 1 ties arch's 1 + 2; the last declared wins.
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"varch", "device={arch(x86_64)}"},
      {"vkinds", "device={kind(host, cpu)}"}};
  EXPECT_EQ(Winner("spec", {}, kinds), "varch");
  EXPECT_EQ(Winner("clang-14", {}, kinds), "vkinds");
  // metadirective.c: clang 14 sees no enclosing construct.
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"when1", "construct={parallel}"}};
  EXPECT_EQ(Winner("spec", {"parallel"}, meta, Directive::kMetadirective),
            "when1");
  EXPECT_EQ(Winner("clang-14", {"parallel"}, meta, Directive::kMetadirective),
            "base");
}

TEST(CompilerProfileTest, AnExplicitTieRuleReplacesTheCompilers) {
  const std::vector<std::pair<std::string, std::string>> two = {
      {"v1", "device={kind(host)}"}, {"v2", "device={kind(host)}"}};
  EXPECT_EQ(Winner("spec", {}, two), "v1");
  EXPECT_EQ(Winner("spec", {}, two, Directive::kDeclareVariant,
                   TieChoice::kLastDeclared),
            "v2");
  EXPECT_EQ(Winner("gcc-12", {}, two, Directive::kDeclareVariant,
                   TieChoice::kFirstDeclared),
            "v1");
  // Metadirectives keep the texts' first `when`.
  EXPECT_EQ(Winner("spec", {}, two, Directive::kMetadirective,
                   TieChoice::kLastDeclared),
            "v1");
  EXPECT_EQ(*TieChoiceFromName("last"), TieChoice::kLastDeclared);
  EXPECT_EQ(*TieChoiceFromName(""), TieChoice::kCompilerDefault);
  EXPECT_THAT(TieChoiceFromName("newest").status().message(),
              HasSubstr("expected first or last"));
}

TEST(CompilerProfileTest, RefusalsNameTheCompiler) {
  absl::StatusOr<Selector> meta =
      Selector::Parse("construct={parallel}", Directive::kMetadirective);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_THAT(CheckForCompiler(CompilerProfile::kGcc12, *meta).message(),
              HasSubstr("gcc-12 ignores metadirectives"));
  EXPECT_TRUE(CheckForCompiler(CompilerProfile::kClang14, *meta).ok());
  absl::StatusOr<Selector> scored =
      Selector::Parse("user={condition(score(5): 1)}");
  ASSERT_TRUE(scored.ok()) << scored.status();
  EXPECT_THAT(CheckForCompiler(CompilerProfile::kClang14, *scored).message(),
              HasSubstr("clang-14 refuses a score"));
  EXPECT_TRUE(CheckForCompiler(CompilerProfile::kSpec, *scored).ok());
}

TEST(CompilerProfileTest, ExplainSaysWhyTheSimdVariantIsNotCalled) {
  Context context;
  AddConstruct(context, "simd");
  std::vector<Candidate> candidates;
  candidates.push_back({"vsimd", *Selector::Parse("construct={simd}")});
  absl::StatusOr<Resolution> r = Resolve(
      candidates, context,
      ResolveOptionsFor(CompilerProfile::kGcc12, Directive::kDeclareVariant));
  ASSERT_TRUE(r.ok()) << r.status();
  Explanation e = Explain(*r, {}, TargetDevicesView());
  EXPECT_TRUE(e.selection.base());
  EXPECT_EQ(e.selection.replaced, 0);
  EXPECT_THAT(e.ToText(), HasSubstr("not called: names simd"));
}

TEST(CompilerProfileTest, UnknownNamesListTheKnownOnes) {
  absl::StatusOr<CompilerProfile> p = CompilerProfileFromName("icc");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("spec, gcc-12, clang-14"));
}

}  // namespace
}  // namespace ctxsel::selector
