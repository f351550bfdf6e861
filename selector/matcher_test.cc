// Matching rules: construct subsequences and positions, simd clauses,
// device, implementation and user sets.
#include "selector/matcher.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/compiled.h"
#include "selector/scorer.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

StaticMatch Static(absl::string_view text, const Context& ctx) {
  absl::StatusOr<Selector> s = Selector::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return MatchStatic(s->ast(), ctx);
}

Context Constructs(std::initializer_list<const char*> names) {
  Context ctx;
  for (const char* n : names) AddConstruct(ctx, n);
  return ctx;
}

TEST(ConstructTest, ContextNamesResolveAliasesOnly) {
  Context ctx;
  for (const char* c : {"target", "do", "distribute", "simd"}) {
    AddConstruct(ctx, c);
  }
  EXPECT_THAT(ConstructNamesOf(ctx),
              ElementsAre("target", "for", "distribute", "simd"));
  // A `do` in the context matches a `for` selector at its position.
  EXPECT_THAT(Static("construct={for}", ctx).construct_positions,
              ElementsAre(2));
}

TEST(ConstructTest, OrderedSubsequence) {
  Context ctx = Constructs({"target", "teams", "parallel", "for"});
  EXPECT_TRUE(Static("construct={target, for}", ctx).compatible);
  StaticMatch m = Static("construct={for, target}", ctx);
  EXPECT_FALSE(m.compatible);
  EXPECT_THAT(m.reason,
              HasSubstr("construct.target: not active after for in the "
                        "context's construct set {target, teams, parallel, "
                        "for}"));
  EXPECT_FALSE(Static("construct={simd}", ctx).compatible);
  EXPECT_TRUE(Static("construct={do}", Constructs({"do"})).compatible);
  EXPECT_TRUE(Static("construct={for}", Constructs({"do"})).compatible);
}

TEST(ConstructTest, HighestValuedEmbeddingWhenConstructsRepeat) {
  Context ctx =
      Constructs({"parallel", "for", "parallel", "target", "parallel"});
  EXPECT_THAT(Static("construct={parallel}", ctx).construct_positions,
              ElementsAre(5));
  EXPECT_THAT(Static("construct={parallel, target}", ctx).construct_positions,
              ElementsAre(3, 4));
  EXPECT_THAT(Static("construct={for, parallel}", ctx).construct_positions,
              ElementsAre(2, 5));
  EXPECT_THAT(Static("construct={for, target}", ctx).construct_positions,
              ElementsAre(2, 4));
}

TEST(SimdTest, ClauseRules) {
  Context ctx = Constructs({"parallel"});
  ConstructTrait simd;
  simd.name = "simd";
  simd.simdlen = 16;
  simd.aligned = {{"a", 32}, {"b", 64}};
  simd.linear = {{"i", {}}};
  simd.uniform = {"n"};
  simd.notinbranch = true;
  ctx.construct.push_back(simd);
  // simdlen(n) matches simdlen(m) when m is a multiple of n.
  EXPECT_TRUE(Static("construct={simd(simdlen(8))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(simdlen(16))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(simdlen(32))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(simdlen(3))}", ctx).compatible);
  // aligned(list:n) matches aligned(list:m) when n is a multiple of m.
  EXPECT_TRUE(Static("construct={simd(aligned(a:64))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(aligned(a, b:64))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(aligned(a:16))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(aligned(c:64))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(aligned(b))}", ctx).compatible);
  EXPECT_TRUE(
      Static("construct={simd(linear(i), uniform(n))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(uniform(i))}", ctx).compatible);
  EXPECT_TRUE(
      Static("construct={parallel, simd(notinbranch)}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(inbranch)}", ctx).compatible);
}

TEST(SimdTest, LinearStepsMatch) {
  Context ctx;
  ConstructTrait simd;
  simd.name = "simd";
  simd.linear["i"] = {};           // linear(i): step 1
  simd.linear["j"].constant = 2;   // linear(j:2)
  simd.linear["k"].constant = -1;  // linear(k:-1)
  simd.linear["p"].uniform = "n";  // linear(p:n)
  simd.uniform = {"n"};
  ctx.construct.push_back(simd);
  EXPECT_TRUE(Static("construct={simd(linear(i))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(linear(i:1))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(linear(i:2))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(linear(j:2))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(linear(j))}", ctx).compatible);
  EXPECT_TRUE(Static("construct={simd(linear(k:-1))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(linear(k:1))}", ctx).compatible);
  EXPECT_TRUE(
      Static("construct={simd(linear(p:n), uniform(n))}", ctx).compatible);
  EXPECT_FALSE(
      Static("construct={simd(linear(p:m), uniform(m))}", ctx).compatible);
  EXPECT_FALSE(Static("construct={simd(linear(p))}", ctx).compatible);
}

TEST(DeviceTest, NameSetsAndKindAny) {
  Context ctx;
  ctx.device.kind = {"gpu", "nohost"};
  ctx.device.arch = {"nvptx", "nvidia_gpu_sm_70"};
  ctx.device.isa = {"sm_70"};
  ctx.device.vendor = {"nvidia"};
  EXPECT_TRUE(Static("device={kind(gpu, nohost), arch(nvidia_gpu_sm_70)}", ctx)
                  .compatible);
  EXPECT_TRUE(Static("device={kind(any)}", ctx).compatible);
  EXPECT_TRUE(Static("device={vendor(nvidia)}", ctx).compatible);
  StaticMatch m = Static("device={kind(gpu), isa(sm_80)}", ctx);
  EXPECT_FALSE(m.compatible);
  EXPECT_EQ(m.reason, "device.isa: sm_80 not in {sm_70}");
  m = Static("device={kind(host)}", ctx);
  EXPECT_EQ(m.reason, "device.kind: host not in {gpu, nohost}");
  // target_device is not part of the static match.
  EXPECT_TRUE(Static("target_device={kind(fpga)}", ctx).compatible);
}

TEST(ImplementationTest, VendorRequiresAndMemoryOrder) {
  Context ctx;
  ctx.implementation.vendor = {"llvm"};
  ctx.implementation.requires_ = {"unified_shared_memory"};
  ctx.implementation.atomic_default_mem_order = "seq_cst";
  EXPECT_TRUE(Static("implementation={vendor(llvm)}", ctx).compatible);
  EXPECT_FALSE(Static("implementation={vendor(gnu)}", ctx).compatible);
  EXPECT_TRUE(Static("implementation={requires(unified_shared_memory, "
                     "atomic_default_mem_order(seq_cst))}",
                     ctx)
                  .compatible);
  StaticMatch m = Static("implementation={requires(reverse_offload)}", ctx);
  EXPECT_EQ(m.reason,
            "implementation.requires: reverse_offload not in "
            "{unified_shared_memory}");
  EXPECT_TRUE(Static("implementation={atomic_default_mem_order(seq_cst)}", ctx)
                  .compatible);
  m = Static("implementation={atomic_default_mem_order(relaxed)}", ctx);
  EXPECT_EQ(m.reason,
            "implementation.requires: atomic_default_mem_order(relaxed) but "
            "the context has 'seq_cst'");
  EXPECT_FALSE(Static("implementation={requires(atomic_default_mem_order("
                      "relaxed))}",
                      ctx)
                   .compatible);
}

TEST(UserTest, ConstantConditionsAreStatic) {
  Context ctx;
  EXPECT_TRUE(Static("user={condition(1 + 1 == 2)}", ctx).compatible);
  StaticMatch m = Static("user={condition(0)}", ctx);
  EXPECT_EQ(m.reason, "user.condition(0): false");
  // Non-constant conditions are left to MatchDynamic().
  EXPECT_TRUE(Static("user={condition(N > 0)}", ctx).compatible);
}

TEST(DynamicTest, ConditionsAndTargetDevices) {
  Selector s = *Selector::Parse(
      "user={condition(N > 32)}, target_device={device_num(D), isa(sm_70)}");
  TargetDevices devices;
  devices.devices[0].isa = {"sm_70"};
  devices.devices[1].isa = {"sm_80"};
  std::string reason;
  EXPECT_EQ(MatchDynamic(s.ast(), {{"N", 64}, {"D", 0}}, devices, &reason),
            DynamicMatch::kHolds);
  EXPECT_EQ(MatchDynamic(s.ast(), {{"N", 1}, {"D", 0}}, devices, &reason),
            DynamicMatch::kFails);
  EXPECT_EQ(reason, "user.condition(N > 32): false");
  EXPECT_EQ(MatchDynamic(s.ast(), {{"N", 64}, {"D", 1}}, devices, &reason),
            DynamicMatch::kFails);
  EXPECT_EQ(reason, "target_device.isa: sm_70 not in {sm_80}");
  EXPECT_EQ(MatchDynamic(s.ast(), {{"N", 64}, {"D", 7}}, devices, &reason),
            DynamicMatch::kFails);
  EXPECT_EQ(reason, "target_device: no device 7 in the context");
  EXPECT_EQ(MatchDynamic(s.ast(), {{"N", 64}}, devices, &reason),
            DynamicMatch::kFails);
  EXPECT_EQ(reason, "target_device.device_num(D): unknown variable D");
  EXPECT_EQ(MatchDynamic(s.ast(), {}, devices, nullptr), DynamicMatch::kFails);
}

// Select's flattened dynamic part gives MatchDynamic's verdict for every
// selector and request of the table.
TEST(DynamicTest, FlattenedPartAgreesWithMatchDynamic) {
  TargetDevices devices;
  devices.devices[0].isa = {"sm_70"};
  devices.devices[1].isa = {"sm_80"};
  const char* selectors[] = {
      "user={condition(N > 32)}",
      "user={condition(N > 32 && N % 2 == 0)}",
      "user={condition(foo(N))}",
      "user={condition(bar())}, target_device={isa(sm_70)}",
      "target_device={device_num(D), isa(sm_70)}",
      "target_device={isa(sm_70)}",
      "user={condition(N > 32)}, target_device={device_num(D), isa(sm_80)}",
      "user={condition(score(3): 1 == 1)}, target_device={kind(any)}",
  };
  const Variables requests[] = {{},
                                {{"N", 64}},
                                {{"N", 64}, {"D", 0}},
                                {{"N", 1}, {"D", 1}},
                                {{"N", 64}, {"D", 1}},
                                {{"N", 64}, {"D", 7}},
                                {{"N", 9}, {"D", 0}}};
  for (const char* text : selectors) {
    absl::StatusOr<Selector> s = Selector::Parse(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    DynamicPart part = DynamicPartOf(s->ast());
    for (const Variables& vars : requests) {
      for (int64_t default_device : {0, 1}) {
        TargetDevicesView view(devices, default_device);
        EXPECT_EQ(MatchDynamicPart(part, vars, view),
                  MatchDynamic(s->ast(), vars, view, nullptr))
            << text << " with " << vars.size() << " variables, default "
            << default_device;
      }
    }
  }
}

}  // namespace
}  // namespace ctxsel::selector::internal

namespace ctxsel::selector::internal {
namespace {

// Resolve matches by interned ids (MatchStaticByIds, SumScoreByIds) and
// falls back to the tree only for what ids cannot express: both paths must
// give every selector, context and compiler rule the same verdict,
// positions and sum.
TEST(ByIdsTest, AgreesWithTheTreeOnEverySelectorContextAndRule) {
  const char* selectors[] = {
      "device={kind(gpu)}",
      "device={kind(any)}",
      "device={kind(nohost), arch(nvptx)}",
      "device={kind(gpu, nohost), isa(sm_90, sm_80)}",
      "target_device={arch(nvptx)}, device={isa(sm_90)}",
      "device={vendor(nvidia), extension(ext_a)}",
      "device={kind(cpu)}",
      "implementation={vendor(llvm, gnu)}",
      "implementation={vendor(score(3): gnu), extension(x)}",
      "implementation={requires(unified_address)}",
      "implementation={unified_shared_memory}",
      "implementation={atomic_default_mem_order(seq_cst)}",
      "construct={parallel}",
      "construct={target, teams, parallel, for}",
      "construct={teams, for}",
      "construct={parallel, for}",
      "construct={simd}",
      "construct={for, simd(simdlen(4))}",
      "construct={parallel}, device={kind(gpu), arch(nvptx)}",
      "construct={teams}, device={isa(sm_90)}, user={condition(1)}",
      "user={condition(0)}",
      "user={condition(2 > 1)}",
      "user={condition(score(5): 1)}",
      "device={kind(gpu)}, user={condition(N > 3)}",
      "target_device={kind(gpu)}, device={arch(nvptx)}",
  };
  std::vector<Context> contexts(5);
  for (const char* c : {"target", "teams", "parallel", "for", "simd"}) {
    AddConstruct(contexts[0], c);
  }
  contexts[0].construct.back().simdlen = 8;
  contexts[0].device = {{"gpu", "nohost"}, {"nvptx"}, {"sm_90"}, {}, {}};
  contexts[0].implementation.vendor = {"llvm"};
  contexts[0].implementation.requires_ = {"unified_address"};
  contexts[0].implementation.atomic_default_mem_order = "seq_cst";
  for (const char* c : {"parallel", "teams", "parallel", "do"}) {
    AddConstruct(contexts[1], c);
  }
  contexts[1].device = {{"cpu", "host"}, {"x86_64"}, {"avx2"}, {}, {}};
  contexts[1].implementation.vendor = {"gnu"};
  contexts[1].implementation.extension = {"x"};
  contexts[2].device = {
      {"gpu"}, {"nvptx"}, {"sm_80", "sm_90"}, {"nvidia"}, {"ext_a"}};
  contexts[2].implementation.requires_ = {"unified_address",
                                          "unified_shared_memory"};
  AddConstruct(contexts[3], "teams");
  AddConstruct(contexts[3], "for");
  contexts[3].device.kind = {"any_name_not_any"};
  for (const char* c : {"target", "parallel", "for", "simd"}) {
    AddConstruct(contexts[4], c);
  }
  std::vector<ResolveOptions> rules(6);
  rules[1].lowest_embedding = true;
  rules[2].kind_any_scored = true;
  rules[3].kind_per_property = true;
  rules[3].kind_any_scored = true;
  rules[4].kind_per_property = true;
  rules[4].l_from_selector = true;
  rules[5].positions_from_innermost = true;
  int by_ids = 0;
  for (const char* text : selectors) {
    absl::StatusOr<Selector> s = Selector::Parse(text);
    if (!s.ok()) {
      ADD_FAILURE() << text << ": " << s.status();
      continue;
    }
    for (size_t c = 0; c < contexts.size(); ++c) {
      const ContextTraits traits = CompileContext(contexts[c]);
      const int l = static_cast<int>(contexts[c].construct.size());
      for (const ResolveOptions& o : rules) {
        StaticMatch tree =
            MatchStatic(s->ast(), contexts[c], ConstructNamesOf(contexts[c]),
                        false, o.lowest_embedding);
        StaticMatch ids;
        ByIds verdict =
            MatchStaticByIds(s->ast(), traits, 0, o.lowest_embedding, ids);
        if (verdict == ByIds::kCannot) continue;
        ++by_ids;
        SCOPED_TRACE(testing::Message() << text << " in context " << c);
        ASSERT_EQ(verdict == ByIds::kCompatible, tree.compatible);
        if (!tree.compatible) continue;
        EXPECT_EQ(ids.construct_positions, tree.construct_positions);
        absl::StatusOr<ScoreSum> sum = SumScore(
            s->ast(), tree.construct_positions, l, /*with_terms=*/false, o);
        ASSERT_TRUE(sum.ok());
        uint64_t fast = 0;
        ASSERT_TRUE(SumScoreByIds(s->ast().requirements,
                                  ids.construct_positions, l, o, &fast));
        EXPECT_EQ(fast, sum->sum);
      }
    }
  }
  // Only simd clauses and the memory order need the tree.
  EXPECT_EQ(by_ids,
            (std::size(selectors) - 2) * contexts.size() * rules.size());
}

TEST(ByIdsTest, ContextTraitsAreKeptPerContextObject) {
  auto gpu = std::make_shared<Context>();
  gpu->device.kind = {"gpu"};
  const ContextTraits* first = &ContextTraitsOf(gpu);
  EXPECT_EQ(&ContextTraitsOf(gpu), first);  // kept
  EXPECT_TRUE(first->Has(TraitKey(InternName("gpu"), TraitField::kDeviceKind)));
  // The context is held while kept, so no other object takes its address;
  // another object with other traits is compiled on its own.
  std::weak_ptr<Context> kept = gpu;
  gpu.reset();
  EXPECT_FALSE(kept.expired());
  auto cpu = std::make_shared<Context>();
  cpu->device.kind = {"cpu"};
  const ContextTraits& traits = ContextTraitsOf(cpu);
  EXPECT_TRUE(traits.Has(TraitKey(InternName("cpu"), TraitField::kDeviceKind)));
  EXPECT_FALSE(
      traits.Has(TraitKey(InternName("gpu"), TraitField::kDeviceKind)));
}

}  // namespace
}  // namespace ctxsel::selector::internal
