#include "selector/compiler_profile.h"

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

TEST(CompilerProfileTest, UnknownNamesListTheKnownOnes) {
  absl::StatusOr<CompilerProfile> p = CompilerProfileFromName("icc");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("spec, gcc-12, clang-14"));
}

}  // namespace
}  // namespace ctxsel::selector
