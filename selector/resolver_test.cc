#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/device_variables.h"
#include "selector/job_check.h"
#include "selector/selector.h"

namespace ctxsel::selector {
namespace {

using ::testing::HasSubstr;

std::vector<Candidate> Candidates(
    const std::vector<std::pair<std::string, std::string>>& list,
    Directive directive = Directive::kDeclareVariant) {
  std::vector<Candidate> out;
  for (const auto& [name, text] : list) {
    absl::StatusOr<Selector> s = Selector::Parse(text, directive);
    EXPECT_TRUE(s.ok()) << text << ": " << s.status();
    if (s.ok()) out.push_back({name, *s});
  }
  return out;
}

uint64_t ScoreOf(const Resolution& r, absl::string_view name) {
  Explanation e = Explain(r, {}, {});
  for (const CandidateReport& c : e.candidates) {
    if (c.name == name) return c.score;
  }
  ADD_FAILURE() << "no candidate " << name;
  return 0;
}

// The spec's selector_scoring.1 example.
Context ScoringContext() {
  Context ctx;
  for (const char* c :
       {"target", "teams", "distribute", "parallel", "for", "task"}) {
    AddConstruct(ctx, c);
  }
  ctx.device.kind = {"gpu"};
  ctx.device.arch = {"nvptx"};
  ctx.device.isa = {"sm_70"};
  return ctx;
}

TEST(ResolveTest, SelectorScoringExampleOne) {
  absl::StatusOr<Resolution> r =
      Resolve(Candidates({{"fx1", "construct={target}"},
                          {"fx2", "construct={teams,parallel,for}"},
                          {"fx3", "device={kind(gpu),isa(sm_70)}"},
                          {"fx4", "device={arch(nvptx),isa(sm_70)}"}}),
              ScoringContext());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ScoreOf(*r, "fx1"), 2u);
  EXPECT_EQ(ScoreOf(*r, "fx2"), 27u);
  EXPECT_EQ(ScoreOf(*r, "fx3"), 321u);
  EXPECT_EQ(ScoreOf(*r, "fx4"), 385u);
  Selection s = Select(*r, {}, {});
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.score, 385u);
  EXPECT_FALSE(s.dynamic);
  ASSERT_EQ(r->candidates().size(), 4u);
  EXPECT_EQ(r->dynamic_prefix_size(), 1u);
}

TEST(ResolveTest, SelectorScoringExampleTwo) {
  Context ctx;
  ctx.implementation.requires_ = {"unified_address", "unified_shared_memory"};
  absl::StatusOr<Resolution> r = Resolve(
      Candidates(
          {{"kernel_target_ua", "implementation={requires(unified_address)}"},
           {"kernel_target_usm",
            "implementation={requires(unified_shared_memory)}"},
           {"kernel_target_usm_v2",
            "implementation={requires(unified_shared_memory)},"
            " user={condition(score(1): version==2)}"}}),
      ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ScoreOf(*r, "kernel_target_ua"), 1u);
  EXPECT_EQ(ScoreOf(*r, "kernel_target_usm"), 0u);
  EXPECT_EQ(ScoreOf(*r, "kernel_target_usm_v2"), 2u);
  EXPECT_EQ(r->dynamic_prefix_size(), 2u);
  EXPECT_EQ(Select(*r, {{"version", 2}}, {}).index, 2);
  Selection other = Select(*r, {{"version", 1}}, {});
  EXPECT_EQ(other.index, 0);
  EXPECT_EQ(other.evaluated, 2);
  // An unknown variable makes the dynamic candidate incompatible.
  EXPECT_EQ(Select(*r, {}, {}).index, 0);
}

TEST(ResolveTest, EqualScoresKeepDeclarationOrder) {
  Context ctx;
  ctx.implementation.vendor = {"llvm"};
  absl::StatusOr<Resolution> r =
      Resolve(Candidates({{"a", "implementation={vendor(llvm)}"},
                          {"b", "user={condition(1)}"}}),
              ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Select(*r, {}, {}).index, 0);
}

TEST(ResolveTest, NoCompatibleCandidateMeansBase) {
  absl::StatusOr<Resolution> r =
      Resolve(Candidates({{"a", "device={kind(fpga)}"}}), Context());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Select(*r, {}, {}).base());
  EXPECT_EQ(r->dynamic_prefix_size(), 0u);
}

TEST(ResolveTest, DynamicPrefixStopsAtFirstStatic) {
  Context ctx;
  AddConstruct(ctx, "parallel");
  absl::StatusOr<Resolution> r =
      Resolve(Candidates({{"dyn_low", "user={condition(score(1): N > 4)}"},
                          {"dyn_high", "user={condition(score(10): N > 100)}"},
                          {"static_mid",
                           "construct={parallel}, "
                           "implementation={vendor(score(4): llvm)}"},
                          {"static_par", "construct={parallel}"}}),
              [&] {
                ctx.implementation.vendor = {"llvm"};
                return ctx;
              }());
  ASSERT_TRUE(r.ok()) << r.status();
  // dyn_high 11, static_mid 1+1+4=6, dyn_low 2, static_par 0 (subset).
  ASSERT_EQ(r->dynamic_prefix_size(), 2u);
  EXPECT_EQ(r->candidates()[0].index, 1);
  EXPECT_EQ(r->candidates()[1].index, 2);
  EXPECT_EQ(Select(*r, {{"N", 1000}}, {}).index, 1);
  EXPECT_EQ(Select(*r, {{"N", 50}}, {}).index, 2);
  EXPECT_EQ(Select(*r, {{"N", 1}}, {}).index, 2);
}

TEST(ResolveTest, TargetDeviceUsesDeviceNumOrDefault) {
  TargetDevices devices;
  devices.default_device = 0;
  devices.devices[0].kind = {"gpu"};
  devices.devices[0].arch = {"nvptx"};
  devices.devices[1].kind = {"gpu"};
  devices.devices[1].arch = {"amdgcn"};
  devices.devices[-1].kind = {"host", "cpu"};
  absl::StatusOr<Resolution> r = Resolve(
      Candidates({{"amd", "target_device={device_num(dev), arch(amdgcn)}"},
                  {"nv", "target_device={arch(nvptx)}"},
                  {"host", "target_device={device_num(-1), kind(host)}"}}),
      Context());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Select(*r, {{"dev", 1}}, devices).index, 0);
  EXPECT_EQ(Select(*r, {{"dev", 0}}, devices).index, 1);
  devices.default_device = 1;
  EXPECT_EQ(Select(*r, {{"dev", 0}}, devices).index, 2);
  devices.devices.erase(-1);
  EXPECT_TRUE(Select(*r, {{"dev", 0}}, devices).base());
}

TEST(ResolveTest, RejectsHugeConstructSets) {
  Context ctx;
  for (int i = 0; i <= kMaxConstructTraits; ++i) AddConstruct(ctx, "parallel");
  EXPECT_FALSE(Resolve({}, ctx).ok());
  ctx.construct.pop_back();
  ctx.device.isa = {"x"};
  absl::StatusOr<Resolution> r = Resolve(
      Candidates({{"a", "device={isa(x)}, construct={parallel}"}}), ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ScoreOf(*r, "a"), (uint64_t{1} << 62) + (uint64_t{1} << 59) + 1);
}

TEST(ResolveTest, ExplicitScoreOverflowIsAnError) {
  absl::StatusOr<Resolution> r = Resolve(
      Candidates({{"a",
                   "implementation={vendor(score(9223372036854775807): x),"
                   " extension(score(9223372036854775807): y)},"
                   " user={condition(score(9223372036854775807): 1)}"}}),
      [] {
        Context c;
        c.implementation.vendor = {"x"};
        c.implementation.extension = {"y"};
        return c;
      }());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("overflows"));
}

TEST(MatchSelectorTest, ReportsFirstFailingTrait) {
  Context ctx = ScoringContext();
  absl::StatusOr<Selector> s = Selector::Parse("device={arch(amdgcn)}");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<Match> m = MatchSelector(*s, ctx);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->compatible);
  EXPECT_EQ(m->reason, "device.arch: amdgcn not in {nvptx}");
}

TEST(ResolveTest, SharesTheCandidateListAndExplainsFromTheSharedContext) {
  auto list = std::make_shared<const std::vector<Candidate>>(
      std::vector<Candidate>{{"gpu", *Selector::Parse("device={arch(nvptx)}")},
                             {"cpu", *Selector::Parse("device={kind(cpu)}")}});
  auto ctx = std::make_shared<Context>();
  ctx->device.arch = {"nvptx"};
  absl::StatusOr<Resolution> r = Resolve(list, ctx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(&r->declared(), list.get());  // shared, not copied
  // Resolve kept no reasons or terms; Explain computes them.
  Explanation e = Explain(*r, {}, {});
  EXPECT_THAT(e.candidates[1].reason, HasSubstr("device.kind: cpu not in"));
  ASSERT_EQ(e.candidates[0].terms.size(), 1u);
  EXPECT_EQ(e.candidates[0].terms[0].trait, "device.arch");
}

// One request asks several device classes: shared verdicts are keyed by
// candidate, not by rank (the classes rank different candidates first).
TEST(SelectTest, SharedConditionVerdictsGiveTheAnswersOfUnsharedOnes) {
  auto list = std::make_shared<const std::vector<Candidate>>(Candidates({
      {"gpu", "device={kind(gpu)}, user={condition(N > 10)}"},
      {"cpu", "device={kind(cpu)}, user={condition(N > 100)}"},
      {"big", "user={condition(N > 1000)}"},
  }));
  std::vector<Resolution> classes;
  for (const char* kind : {"gpu", "cpu"}) {
    auto ctx = std::make_shared<Context>();
    ctx->device.kind = {kind};
    absl::StatusOr<Resolution> r = Resolve(list, ctx);
    ASSERT_TRUE(r.ok()) << r.status();
    classes.push_back(*r);
  }
  for (int64_t n : {5, 50, 500, 5000}) {
    Variables vars = {{"N", n}};
    ConditionVerdicts verdicts;  // one request
    for (const Resolution& r : classes) {
      Selection alone = Select(r, vars, {});
      Selection shared = Select(r, vars, {}, &verdicts);
      EXPECT_EQ(shared.index, alone.index) << "N=" << n;
      EXPECT_EQ(shared.score, alone.score) << "N=" << n;
    }
  }
  // N=50: the gpu class takes "gpu"; the cpu class's "cpu" (ranked first
  // there, as "gpu" is on the gpu class) fails, and so does "big".
  ConditionVerdicts one_request;
  Variables vars = {{"N", 50}};
  EXPECT_EQ(Select(classes[0], vars, {}, &one_request).index, 0);
  EXPECT_TRUE(Select(classes[1], vars, {}, &one_request).base());
}

// A condition reading the candidate device's capacity differs between the
// classes of one request: its verdict is never shared (a shared one gave the
// small GPU the big-batch variant).
TEST(SelectTest, DeviceVariableConditionsAreEvaluatedPerClass) {
  auto list = std::make_shared<const std::vector<Candidate>>(Candidates({
      {"big_batch", "user={condition(ctxsel_device_memory_gib >= 60)}"},
      {"small_batch", "user={condition(ctxsel_device_memory_gib >= 8)}"},
  }));
  absl::StatusOr<Resolution> r = Resolve(list, std::make_shared<Context>());
  ASSERT_TRUE(r.ok()) << r.status();
  Variables full = {{"N", 1}};
  AddDeviceVariables({.memory_bytes = 80ull << 30, .compute_units = 132}, full);
  EXPECT_EQ(full.at("ctxsel_device_memory_gib"), 80);
  EXPECT_EQ(full.at("ctxsel_device_compute_units"), 132);
  Variables slice = {{"N", 1}};
  AddDeviceVariables({.memory_bytes = 10ull << 30}, slice);
  EXPECT_FALSE(slice.contains("ctxsel_device_compute_units"));
  Variables unknown = {{"N", 1}};
  AddDeviceVariables({}, unknown);

  ConditionVerdicts one_request;
  EXPECT_EQ(Select(*r, full, {}, &one_request).index, 0);
  EXPECT_EQ(Select(*r, slice, {}, &one_request).index, 1);
  // No capacity reported: the variable is unknown and the conditions fail.
  EXPECT_TRUE(Select(*r, unknown, {}, &one_request).base());
  // A job never gives them; CheckVariablesGiven does not ask for them.
  EXPECT_TRUE(CheckVariablesGiven({"ctxsel_device_memory_gib"}, {}).ok());
  EXPECT_FALSE(CheckVariablesGiven({"N", "ctxsel_device_memory_gib"}, {}).ok());
}

}  // namespace
}  // namespace ctxsel::selector
