// Once the interner is full (compiled.h, kMaxInternedNames) a name it never
// saw has no id, and Resolve does without: the same kernel over names that
// have ids and over names that have none ranks, scores and demotes its
// candidates alike, on both strict-subset paths (pairwise, and the index
// past 8 compatible candidates). A test binary of its own: it fills the
// process's table.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "selector/compiled.h"
#include "selector/selector.h"

namespace ctxsel::selector {
namespace {

// A kernel whose names all carry `tag`, so that each tag's are fresh.
// `wide` adds 10 compatible variants (past the pairwise limit of 8).
std::vector<Candidate> Kernel(const std::string& tag, bool wide) {
  std::vector<std::pair<std::string, std::string>> list = {
      {"by_arch", absl::StrCat("device={arch(", tag, "_arch)}")},
      {"by_arch_isa",
       absl::StrCat("device={arch(", tag, "_arch), isa(", tag, "_isa)}")},
      {"by_vendor", absl::StrCat("implementation={vendor(", tag, "_v)}")},
      {"by_vendor_ext", absl::StrCat("implementation={vendor(", tag,
                                     "_v), extension(", tag, "_ext)}")},
      {"elsewhere", absl::StrCat("device={arch(", tag, "_other)}")},
      {"target", "construct={target}"},
  };
  for (int i = 0; wide && i < 10; ++i) {
    list.push_back(
        {absl::StrCat("wide", i),
         absl::StrCat("device={isa(", tag,
                      "_isa)}, "
                      "implementation={extension(",
                      tag, "_ext)}, user={condition(", i + 1, ")}")});
  }
  std::vector<Candidate> out;
  for (const auto& [name, text] : list) {
    absl::StatusOr<Selector> s = Selector::Parse(text);
    EXPECT_TRUE(s.ok()) << text << ": " << s.status();
    if (s.ok()) out.push_back({name, *s});
  }
  return out;
}

Context ContextFor(const std::string& tag) {
  Context ctx;
  AddConstruct(ctx, "target");
  ctx.device.kind = {"gpu"};
  ctx.device.arch = {tag + "_arch"};
  ctx.device.isa = {tag + "_isa"};
  ctx.implementation.vendor = {tag + "_v"};
  ctx.implementation.extension = {tag + "_ext"};
  return ctx;
}

// Each candidate's verdict, score, rank and superset, in declaration order.
std::vector<std::string> Ranking(const std::string& tag, bool wide) {
  absl::StatusOr<Resolution> r = Resolve(Kernel(tag, wide), ContextFor(tag));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  std::vector<std::string> out;
  for (const CandidateReport& c : Explain(*r, {}, {}).candidates) {
    out.push_back(absl::StrCat(c.name, " compatible=", c.compatible,
                               " score=", c.score, " rank=", c.rank,
                               " subset_of=", c.subset_of));
  }
  return out;
}

TEST(InternerCapTest, ANameWithoutAnIdChangesNoResolution) {
  const std::vector<std::string> with_ids = Ranking("a", false);
  const std::vector<std::string> wide_with_ids = Ranking("w", true);
  ASSERT_FALSE(with_ids.empty());
  // Full from here on: every name of tags "b" and "x" is new.
  internal::SetInternedNamesCapForTesting(0);
  EXPECT_EQ(internal::InternName("never_seen"), internal::kNoNameId);
  EXPECT_NE(internal::InternName("a_arch"), internal::kNoNameId);
  EXPECT_EQ(Ranking("b", false), with_ids);
  EXPECT_EQ(Ranking("x", true), wide_with_ids);
  // Names that have ids still resolve as before, beside new ones.
  EXPECT_EQ(Ranking("a", false), with_ids);
  internal::SetInternedNamesCapForTesting(internal::kMaxInternedNames);
}

TEST(InternerCapTest, SubsetsAreFoundWithoutIds) {
  internal::SetInternedNamesCapForTesting(0);
  const std::vector<std::string> ranking = Ranking("c", false);
  internal::SetInternedNamesCapForTesting(internal::kMaxInternedNames);
  // by_arch is a strict subset of by_arch_isa, by_vendor of by_vendor_ext.
  ASSERT_EQ(ranking.size(), 6u);
  EXPECT_NE(ranking[0].find("subset_of=by_arch_isa"), std::string::npos)
      << ranking[0];
  EXPECT_NE(ranking[2].find("subset_of=by_vendor_ext"), std::string::npos)
      << ranking[2];
  EXPECT_NE(ranking[4].find("compatible=0"), std::string::npos) << ranking[4];
}

// Past 8 compatible candidates Resolve indexes their subset items by id; a
// superset whose names have no id must still demote its subset.
TEST(InternerCapTest, ASupersetWithoutIdsIsFoundPastThePairwiseLimit) {
  std::vector<Candidate> candidates;
  auto add = [&](const std::string& name, const std::string& text) {
    absl::StatusOr<Selector> s = Selector::Parse(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    candidates.push_back({name, *s});
  };
  add("small", "device={arch(m_arch)}");
  for (int i = 0; i < 9; ++i) {
    add(absl::StrCat("filler", i),
        absl::StrCat("user={condition(", i + 1, ")}"));
  }
  internal::SetInternedNamesCapForTesting(0);
  add("big", "device={arch(m_arch), isa(m_new_isa)}");
  internal::SetInternedNamesCapForTesting(internal::kMaxInternedNames);
  Context ctx;
  ctx.device.arch = {"m_arch"};
  ctx.device.isa = {"m_new_isa"};
  absl::StatusOr<Resolution> r = Resolve(candidates, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  const Explanation e = Explain(*r, {}, {});
  ASSERT_EQ(e.candidates.front().name, "small");
  EXPECT_EQ(e.candidates.front().subset_of, "big");
  EXPECT_EQ(e.candidates.front().score, 0u);
}

}  // namespace
}  // namespace ctxsel::selector
