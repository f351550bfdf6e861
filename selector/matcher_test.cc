// Matching rules: construct subsequences and positions, simd clauses,
// device, implementation and user sets.
#include "selector/matcher.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
