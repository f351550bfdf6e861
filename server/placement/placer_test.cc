#include "server/placement/placer.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server::placement {
namespace {

using ::ctxsel::server::placement::testing::DeviceOf;
using ::ctxsel::server::placement::testing::Kind;
using ::ctxsel::server::placement::testing::MakeDevice;
using ::ctxsel::server::placement::testing::MakeVariant;
using ::ctxsel::server::placement::testing::Pick;
using ::ctxsel::server::placement::testing::PlacerTest;
using ::ctxsel::server::placement::testing::SaxpyJob;
using ::ctxsel::server::placement::testing::SaxpyVariants;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(PlacerTest, HighestScoringClassWins) {
  AddNode("a",
          {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kH100),
           MakeDevice("a", 1, Kind::kMi250, 0.9)});
  absl::StatusOr<Placement> p = placer_.Select(SaxpyJob());
  ASSERT_TRUE(p.ok()) << p.status();
  // hip scores 8 > avx 6 > cuda 4, whatever the load.
  EXPECT_EQ(p->choice.variant->name, "saxpy_hip");
  EXPECT_EQ(p->choice.device.id, "a/1");
  EXPECT_EQ(p->choice.score, 8u);
  EXPECT_FALSE(p->choice.dynamic);
  EXPECT_THAT(p->choice.device_class->name, HasSubstr("amdgcn"));
  EXPECT_EQ(p->choice.device_class->traits.isa.count("gfx90a"), 1u);
  EXPECT_THAT(p->explanation, HasSubstr("saxpy_hip"));
  EXPECT_THAT(p->explanation, HasSubstr("least_loaded"));
}

// An answer shares its device's class, built once when the class was
// interned: no answer copies trait sets, and one a caller holds stays
// readable after the class's last device left the fleet.
TEST_F(PlacerTest, AnswersShareTheClassOfTheirDevice) {
  AddNode("a",
          {MakeDevice("a", 0, Kind::kH100), MakeDevice("a", 1, Kind::kH100)});
  absl::StatusOr<Placement> first = placer_.Select(SaxpyJob());
  absl::StatusOr<Placement> second = placer_.Select(SaxpyJob());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_NE(first->choice.device_class, nullptr);
  EXPECT_EQ(first->choice.device_class, second->choice.device_class);
  ASSERT_EQ(first->alternatives.size(), 1u);
  EXPECT_NE(first->alternatives[0].device.id, first->choice.device.id);
  EXPECT_EQ(first->alternatives[0].device_class, first->choice.device_class);
  std::shared_ptr<const DeviceClass> held = first->choice.device_class;
  ASSERT_TRUE(placer_.RemoveNode("a"));
  EXPECT_EQ(held->short_name, "nvidia_gpu_sm_90");
  EXPECT_EQ(held->traits.arch.count("nvptx"), 1u);
  EXPECT_EQ(held->proto.device_class(), held->name);
}

TEST_F(PlacerTest, WithoutExplanationTheSameAnswerAndNoText) {
  AddNode("a",
          {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kH100),
           MakeDevice("a", 1, Kind::kMi250, 0.9)});
  Job job = SaxpyJob();
  job.explanation = false;
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.variant->name, "saxpy_hip");
  EXPECT_EQ(p->choice.device.id, "a/1");
  EXPECT_EQ(p->explanation, "");
  EXPECT_EQ(p->alternatives.size(), 2u);
}

// Jobs whose traits differ only in set order share a signature (and so the
// cached resolutions); a different construct order is another one.
TEST_F(PlacerTest, JobsOfEqualTraitsShareTheirResolutions) {
  AddNode("a", {MakeDevice("a", -1, Kind::kXeon)});
  Job job = SaxpyJob();
  job.implementation.vendor = {"llvm", "gnu", "amd"};
  job.implementation.requires_ = {"unified_shared_memory", "reverse_offload"};
  ASSERT_TRUE(placer_.Select(job).ok());
  const Placer::CacheStats first = placer_.cache_stats();
  Job same = SaxpyJob();
  same.implementation.vendor = {"amd", "gnu", "llvm"};
  same.implementation.requires_ = {"reverse_offload", "unified_shared_memory"};
  same.variables["N"] = 7;  // dynamic: not part of the signature
  ASSERT_TRUE(placer_.Select(same).ok());
  EXPECT_EQ(placer_.cache_stats().misses, first.misses);
  Job other = same;
  other.implementation.vendor.erase("amd");
  ASSERT_TRUE(placer_.Select(other).ok());
  EXPECT_EQ(placer_.cache_stats().misses, first.misses + 1);
}

TEST_F(PlacerTest, CacheStatsCountLookupsAndRebuilds) {
  AddNode("a", {MakeDevice("a", -1, Kind::kXeon)});
  const Placer::CacheStats before = placer_.cache_stats();
  ASSERT_TRUE(placer_.Select(SaxpyJob()).ok());
  const Placer::CacheStats first = placer_.cache_stats();
  EXPECT_EQ(first.misses - before.misses, 1);  // one class, resolved now
  EXPECT_EQ(first.hits - before.hits, 0);
  ASSERT_TRUE(placer_.Select(SaxpyJob()).ok());
  const Placer::CacheStats second = placer_.cache_stats();
  EXPECT_EQ(second.hits - first.hits, 1);
  EXPECT_EQ(second.misses, first.misses);
  // A new class is resolved up front for the signature jobs used: a rebuild,
  // after which the job's lookups on it hit.
  AddNode("b", {MakeDevice("b", 0, Kind::kH100)});
  const Placer::CacheStats rebuilt = placer_.cache_stats();
  EXPECT_EQ(rebuilt.rebuilds - second.rebuilds, 1);
  EXPECT_GE(rebuilt.rebuild_time, second.rebuild_time);
  ASSERT_TRUE(placer_.Select(SaxpyJob()).ok());
  EXPECT_EQ(placer_.cache_stats().misses, rebuilt.misses);
}

// Capacity makes classes (issue 24): two H100s that differ only in memory
// are two classes; a minimum rules the small one out with the capacity that
// did it; a selector reading ctxsel_device_memory_gib picks per class, and
// the host CPU's class, which has no capacity, defines no device variable.
TEST_F(PlacerTest, CapacityMakesClassesThatMinimumsAndConditionsRead) {
  Device big = MakeDevice("a", 0, Kind::kH100);
  big.properties.memory_bytes = uint64_t{80} << 30;
  big.properties.compute_units = 132;
  Device small = MakeDevice("a", 1, Kind::kH100);
  small.properties.memory_bytes = uint64_t{40} << 30;
  small.properties.compute_units = 132;
  Device host = MakeDevice("a", -1, Kind::kXeon);
  host.properties.memory_bytes = uint64_t{512} << 30;
  AddNode("a", {host, big, small});
  Job job = SaxpyJob();
  job.required_kind = "gpu";
  job.min_memory_bytes = uint64_t{60} << 30;
  absl::StatusOr<PlacementReport> report = placer_.Explain(job);
  ASSERT_TRUE(report.ok()) << report.status();
  int gpu_classes = 0;
  for (const ClassReport& c : report->classes) {
    if (c.device_class_short_name != "nvidia_gpu_sm_90") continue;
    ++gpu_classes;
    if (c.capacity.memory_bytes == uint64_t{40} << 30) {
      EXPECT_EQ(c.reason, "min_memory: needs 60 GiB, the class has 40 GiB");
    } else {
      EXPECT_TRUE(c.eligible) << c.reason;
    }
  }
  EXPECT_EQ(gpu_classes, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  job.required_kind.clear();
  job.min_compute_units = 200;
  EXPECT_THAT(DeviceOf(placer_, job),
              HasSubstr("min_compute_units: needs 200, the class has 132 "
                        "compute units"));
  EXPECT_THAT(DeviceOf(placer_, job), HasSubstr("the class has none reported"));

  ASSERT_TRUE(
      placer_
          .SetVariants("train", {MakeVariant("train", "big",
                                             "user={condition("
                                             "ctxsel_device_memory_gib >= 60)}",
                                             0),
                                 MakeVariant("train", "small",
                                             "user={condition("
                                             "ctxsel_device_memory_gib >= 8)}",
                                             1)})
          .ok());
  Job train;
  train.kernel = "train";
  train.allowed_devices = {"a/0"};
  EXPECT_EQ(Pick(placer_, train), "big");
  train.allowed_devices = {"a/1"};
  EXPECT_EQ(Pick(placer_, train), "small");
  train.allowed_devices = {"a/host"};
  EXPECT_EQ(Pick(placer_, train), "base");
}

// A reader's Explains (and Coverage), whatever their signatures, neither
// take the signature cap from Select nor write into the live cache.
TEST(PlacerCacheTest, ExplainAndCoverageLeaveTheCacheToSelect) {
  PlacerOptions options;
  options.max_signatures_per_kernel = 2;
  Placer placer(options);
  ASSERT_TRUE(placer.SetVariants("saxpy", SaxpyVariants()).ok());
  ASSERT_TRUE(
      placer.SetNodeDevices("a", {MakeDevice("a", 0, Kind::kH100)}).ok());
  for (const char* construct : {"target", "teams", "parallel", "simd"}) {
    Job job = SaxpyJob();
    job.construct.resize(1);
    job.construct[0].name = construct;
    ASSERT_TRUE(placer.Explain(job).ok());
    CoverageQuery query;
    query.job = job;
    ASSERT_TRUE(placer.Coverage(query).ok());
  }
  // Select's job is cached: its second lookup hits.
  Job job = SaxpyJob();
  job.construct.resize(1);
  job.construct[0].name = "dispatch";
  ASSERT_TRUE(placer.Select(job).ok());
  const Placer::CacheStats first = placer.cache_stats();
  ASSERT_TRUE(placer.Select(job).ok());
  EXPECT_EQ(placer.cache_stats().hits - first.hits, 1);
  EXPECT_EQ(placer.cache_stats().misses, first.misses);
}

// Explain reports the dynamic verdicts Select reached (one path: the
// Selection Select made, with the request's condition verdicts, is what
// Explain describes), on every class and for every variable value.
TEST_F(PlacerTest, ExplainAgreesWithSelectOnDynamicVariants) {
  ASSERT_TRUE(
      placer_
          .SetVariants("dyn",
                       {MakeVariant("dyn", "rt",
                                    "user={condition(score(90): fast())}", 0),
                        MakeVariant("dyn", "big",
                                    "device={kind(gpu)}, "
                                    "user={condition(score(50): N > 10)}",
                                    1),
                        MakeVariant("dyn", "any", "user={condition(N > 0)}", 2),
                        MakeVariant("dyn", "gpu", "device={kind(gpu)}", 3)})
          .ok());
  AddNode("a",
          {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kH100)});
  for (int64_t n : {0, 1, 11}) {
    Job job;
    job.kernel = "dyn";
    job.variables = {{"N", n}};
    absl::StatusOr<Placement> select = placer_.Select(job);
    absl::StatusOr<PlacementReport> explain = placer_.Explain(job);
    ASSERT_TRUE(select.ok()) << select.status();
    ASSERT_TRUE(explain.ok()) << explain.status();
    ASSERT_TRUE(explain->status.ok()) << explain->status;
    EXPECT_EQ(explain->placement.choice.variant_name(),
              select->choice.variant_name())
        << "N=" << n;
    EXPECT_EQ(explain->placement.choice.runtime_only_variants,
              select->choice.runtime_only_variants);
    for (const ClassReport& c : explain->classes) {
      if (!c.winner) continue;
      const selector::Explanation& e = c.explanation;
      const std::string selected =
          e.selection.base() ? "" : e.candidates[e.selection.index].name;
      EXPECT_EQ(selected, select->choice.variant_name()) << "N=" << n;
      std::vector<std::string> runtime_only;
      for (const selector::CandidateReport& candidate : e.candidates) {
        if (candidate.runtime_only) runtime_only.push_back(candidate.name);
      }
      EXPECT_EQ(runtime_only, select->choice.runtime_only_variants);
    }
  }
}

TEST_F(PlacerTest, BaseFunctionWhereNoVariantFitsRanksBelowVariants) {
  ASSERT_TRUE(placer_
                  .SetVariants("gemm", {MakeVariant("gemm", "gemm_cuda",
                                                    "device={arch(nvptx)}", 0)})
                  .ok());
  Job job;
  job.kernel = "gemm";
  AddNode("cpu", {MakeDevice("cpu", -1, Kind::kXeon)});
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->choice.base());
  EXPECT_EQ(p->choice.variant_name(), "");
  EXPECT_EQ(p->choice.score, 0u);
  EXPECT_EQ(p->choice.device.id, "cpu/host");

  // A busy GPU with a variant beats an idle CPU with the base function.
  AddNode("gpu", {MakeDevice("gpu", 0, Kind::kH100, 1.0)});
  EXPECT_EQ(Pick(placer_, job), "gemm_cuda");
  EXPECT_EQ(DeviceOf(placer_, job), "gpu/0");
}

TEST_F(PlacerTest, LeastLoadedFollowsHeartbeatsAndBreaksTiesById) {
  AddNode("b", {MakeDevice("b", 0, Kind::kH100, 0.5)});
  AddNode("a", {MakeDevice("a", 0, Kind::kH100, 0.5)});
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/0");  // tie: lower id
  ASSERT_TRUE(placer_.UpdateUtilisations("b", {{"b/0", 0.1}}).ok());
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "b/0");
  ASSERT_TRUE(placer_.UpdateUtilisations("a", {{"a/0", 0.05}}).ok());
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/0");
  EXPECT_EQ(placer_.UpdateUtilisations("z", {{"z/9", 0.1}}).code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(placer_.UpdateUtilisations("a", {{"a/0", 1.0}}).ok());
  absl::StatusOr<Placement> p = placer_.Select(SaxpyJob());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->choice.device.id, "b/0");
  ASSERT_EQ(p->alternatives.size(), 1u);
  EXPECT_EQ(p->alternatives[0].device.properties.utilisation, 1.0);
}

TEST_F(PlacerTest, PackPicksBusiestDeviceThatIsNotFull) {
  AddNode("a", {MakeDevice("a", 0, Kind::kH100, 0.3),
                MakeDevice("a", 1, Kind::kH100, 1.0)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100, 0.7),
                MakeDevice("b", 1, Kind::kH100, 0.7)});
  Job job = SaxpyJob();
  job.policy = Policy::kPack;
  EXPECT_EQ(DeviceOf(placer_, job), "b/0");  // 0.7, tie by id
  ASSERT_TRUE(placer_.UpdateUtilisations("b", {{"b/0", 1.0}}).ok());
  EXPECT_EQ(DeviceOf(placer_, job), "b/1");
  ASSERT_TRUE(placer_.UpdateUtilisations("b", {{"b/1", 1.0}}).ok());
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  ASSERT_TRUE(placer_.UpdateUtilisations("a", {{"a/0", 1.0}}).ok());
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");  // all full: least loaded, by id
}

TEST_F(PlacerTest, SpreadRoundRobinsOverNodes) {
  for (const std::string node : {"c", "a", "b"}) {
    AddNode(node, {MakeDevice(node, 0, Kind::kH100, 0.5),
                   MakeDevice(node, 1, Kind::kH100, 0.2)});
  }
  Job job = SaxpyJob();
  job.policy = Policy::kSpread;
  std::vector<std::string> got;
  for (int i = 0; i < 4; ++i) got.push_back(DeviceOf(placer_, job));
  // Nodes by name, the least loaded device on each.
  EXPECT_EQ(got, (std::vector<std::string>{"a/1", "b/1", "c/1", "a/1"}));
  // Explain shows the next pick without consuming it.
  absl::StatusOr<PlacementReport> r = placer_.Explain(job);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->placement.choice.device.id, "b/1");
  EXPECT_EQ(DeviceOf(placer_, job), "b/1");
}

TEST_F(PlacerTest, DynamicPrefixUsesTheJobsVariables) {
  ASSERT_TRUE(placer_
                  .SetVariants("fft", {MakeVariant("fft", "fft_big",
                                                   "device={arch(nvptx)}, "
                                                   "user={condition(N > 1000)}",
                                                   0),
                                       MakeVariant("fft", "fft_small",
                                                   "device={arch(nvptx)}", 1)})
                  .ok());
  AddNode("a", {MakeDevice("a", 0, Kind::kH100)});
  Job job;
  job.kernel = "fft";
  job.variables["N"] = 4096;
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.variant->name, "fft_big");
  EXPECT_TRUE(p->choice.dynamic);
  job.variables["N"] = 10;
  EXPECT_EQ(Pick(placer_, job), "fft_small");
  // A variable the selectors read but the job does not give is a bad job,
  // not a false condition (it used to pick fft_small silently).
  job.variables.clear();
  job.variables["n"] = 4096;
  for (const absl::Status& s :
       {placer_.Select(job).status(), placer_.Explain(job).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(),
                HasSubstr("job.variables: missing N ('n' was given"));
  }
}

TEST_F(PlacerTest, RuntimeOnlyVariantsAboveTheChoiceAreNamed) {
  auto fft = [](const std::string& name, const std::string& selector,
                int64_t order) {
    return MakeVariant("fft", name, selector, order);
  };
  ASSERT_TRUE(
      placer_
          .SetVariants(
              "fft",
              {fft("fft_tuned",
                   "device={arch(nvptx)}, "
                   "user={condition(score(9): tuned_for(n))}",
                   0),
               fft("fft_big",
                   "device={arch(nvptx)}, user={condition(score(5): N > 1000)}",
                   1),
               fft("fft_plan",
                   "device={arch(nvptx)}, user={condition(score(3): plan.ok)}, "
                   "target_device={device_num(D)}",
                   2),
               fft("fft_small", "device={arch(nvptx), kind(gpu)}", 3),
               fft("fft_never", "device={arch(nvptx)}, user={condition(p->n)}",
                   4)})
          .ok());
  AddNode("a", {MakeDevice("a", 0, Kind::kH100)});
  Job job;
  job.kernel = "fft";
  job.variables["N"] = 100;
  job.variables["D"] = 0;
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  // Never chosen by the service; named when ranked above the choice.
  EXPECT_EQ(p->choice.variant->name, "fft_small");
  EXPECT_THAT(p->choice.runtime_only_variants,
              ::testing::ElementsAre("fft_tuned", "fft_plan"));
  EXPECT_THAT(p->explanation,
              HasSubstr("runtime-only condition the program decides: "
                        "'fft_tuned', 'fft_plan'"));
  // What the service can evaluate still rules one out: no device 5.
  job.variables["D"] = 5;
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->choice.runtime_only_variants,
              ::testing::ElementsAre("fft_tuned"));
  job.variables["N"] = 4096;
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.variant->name, "fft_big");
  EXPECT_THAT(p->choice.runtime_only_variants,
              ::testing::ElementsAre("fft_tuned"));
  absl::StatusOr<PlacementReport> report = placer_.Explain(job);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->ToText(),
              HasSubstr("runtime-only condition(tuned_for(n)): the program "
                        "decides"));
}

TEST_F(PlacerTest, TargetDeviceDependsOnTheNodesLayout) {
  // On a node whose device 1 is a GPU, the host runs the offloading
  // variant; elsewhere the plain one.
  ASSERT_TRUE(
      placer_
          .SetVariants("halo", {MakeVariant("halo", "halo_offload",
                                            "device={kind(cpu)}, "
                                            "target_device={device_num(1), "
                                            "kind(gpu)}",
                                            0),
                                MakeVariant("halo", "halo_host",
                                            "device={kind(cpu)}", 1)})
          .ok());
  AddNode("one", {MakeDevice("one", -1, Kind::kXeon),
                  MakeDevice("one", 0, Kind::kH100)});
  AddNode("two", {MakeDevice("two", -1, Kind::kXeon),
                  MakeDevice("two", 0, Kind::kH100),
                  MakeDevice("two", 1, Kind::kH100)});
  Job job;
  job.kernel = "halo";
  job.device_filter = "device={kind(cpu)}";
  job.nodes = {"one"};
  EXPECT_EQ(Pick(placer_, job), "halo_host");
  job.nodes = {"two"};
  EXPECT_EQ(Pick(placer_, job), "halo_offload");
  job.nodes.clear();
  absl::StatusOr<PlacementReport> r = placer_.Explain(job);
  ASSERT_TRUE(r.ok()) << r.status();
  int cpu_reports = 0;
  for (const ClassReport& c : r->classes) {
    if (!c.eligible) continue;
    ++cpu_reports;
    // The layout in its one text form (NodeLayoutText): "two" has GPUs 0-1.
    EXPECT_THAT(c.node_layout,
                ::testing::MatchesRegex("-1:[^,]+,0(-1)?:nvidia_gpu_sm_90"));
    const selector::Selection& s = c.explanation.selection;
    ASSERT_FALSE(s.base());
    std::string chosen = c.explanation.candidates[s.index].name;
    EXPECT_EQ(chosen, c.node_layout.find(",0-1:") != std::string::npos
                          ? "halo_offload"
                          : "halo_host")
        << c.node_layout;
  }
  EXPECT_EQ(cpu_reports, 2);  // one per layout
}

TEST_F(PlacerTest, TargetDeviceDefaultIsTheCandidateDevice) {
  ASSERT_TRUE(
      placer_
          .SetVariants(
              "k", {MakeVariant("k", "k_gpu", "target_device={kind(gpu)}", 0)})
          .ok());
  AddNode("a", {MakeDevice("a", -1, Kind::kXeon),
                MakeDevice("a", 0, Kind::kH100, 0.9)});
  Job job;
  job.kernel = "k";
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  job.device_filter = "device={kind(cpu)}";
  EXPECT_EQ(Pick(placer_, job), "base");
}

TEST_F(PlacerTest, NodeAndDeviceFilterConstraints) {
  AddNode("a",
          {MakeDevice("a", 0, Kind::kMi250), MakeDevice("a", 1, Kind::kH100)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100)});
  Job job = SaxpyJob();
  job.nodes = {"b"};
  EXPECT_EQ(DeviceOf(placer_, job), "b/0");
  job.nodes = {"b", "a", "b"};
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  job.nodes.clear();
  job.device_filter = "device={arch(nvptx)}";
  EXPECT_EQ(Pick(placer_, job), "saxpy_cuda");
  job.nodes = {"nowhere"};
  absl::StatusOr<Placement> p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("unknown nodes: nowhere"));
}

// A launcher's allocation: only the named devices compete, by id or by
// UUID, whatever scores better elsewhere.
TEST_F(PlacerTest, AllowedDevicesConfineTheChoice) {
  std::vector<Device> a = {MakeDevice("a", 0, Kind::kMi250),
                           MakeDevice("a", 1, Kind::kH100),
                           MakeDevice("a", 2, Kind::kH100)};
  a[2].identity.uuid = "GPU-2222";
  AddNode("a", a);
  AddNode("b", {MakeDevice("b", 0, Kind::kMi250)});
  Job job = SaxpyJob();
  job.allowed_devices = {"a/1"};
  EXPECT_EQ(DeviceOf(placer_, job), "a/1");  // not the better-scoring MI250X
  job.allowed_devices = {"GPU-2222"};
  EXPECT_EQ(DeviceOf(placer_, job), "a/2");
  job.allowed_devices = {"a/2", "b/0"};
  EXPECT_EQ(DeviceOf(placer_, job), "b/0");
  job.nodes = {"a"};  // both constraints hold: b/0 is outside the nodes
  EXPECT_EQ(DeviceOf(placer_, job), "a/2");
  job.allowed_devices = {"b/0", "gone/7"};
  absl::StatusOr<Placement> p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(),
              HasSubstr("allowed_devices not live: gone/7"));
  EXPECT_THAT(p.status().message(),
              HasSubstr("allowed_devices outside the job's nodes: b/0"));
}

// same_node: every rank on one node, the first node that can hold them all.
TEST_F(PlacerTest, SameNodeKeepsEveryRankOnOneNode) {
  AddNode("a",
          {MakeDevice("a", 0, Kind::kMi250), MakeDevice("a", 1, Kind::kMi250)});
  AddNode("b",
          {MakeDevice("b", 0, Kind::kH100), MakeDevice("b", 1, Kind::kH100),
           MakeDevice("b", 2, Kind::kH100)});
  Job job = SaxpyJob();
  job.count = 3;
  absl::StatusOr<Placement> spread = placer_.Select(job);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->ranks[0].device.node, "a");  // MI250X scores higher
  EXPECT_EQ(spread->ranks[2].device.node, "b");
  job.same_node = true;
  absl::StatusOr<Placement> one = placer_.Select(job);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->ranks.size(), 3u);
  for (const Choice& rank : one->ranks) EXPECT_EQ(rank.device.node, "b");
  job.count = 4;
  one = placer_.Select(job);
  EXPECT_EQ(one.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(one.status().message(),
              HasSubstr("same_node: none of the 2 best nodes can hold all 4"));
}

// A job that needs an accelerator never lands on the host CPU, and one that
// needs a variant never gets the base function.
TEST_F(PlacerTest, RequiredKindAndVariantRefuseFallbacks) {
  AddNode("a", {MakeDevice("a", -1, Kind::kXeon)});
  Job job = SaxpyJob();
  EXPECT_EQ(DeviceOf(placer_, job), "a/host");
  job.required_kind = "gpu";
  absl::StatusOr<Placement> p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("required_kind: not a gpu"));
  AddNode("b", {MakeDevice("b", 0, Kind::kH100)});
  EXPECT_EQ(DeviceOf(placer_, job), "b/0");

  ASSERT_TRUE(
      placer_
          .SetVariants("only_gpu", {MakeVariant("only_gpu", "only_gpu_cuda",
                                                "device={arch(nvptx)}", 0)})
          .ok());
  Job cpu_only = SaxpyJob();
  cpu_only.kernel = "only_gpu";
  cpu_only.nodes = {"a"};
  EXPECT_EQ(Pick(placer_, cpu_only), "base");
  cpu_only.require_variant = true;
  p = placer_.Select(cpu_only);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("require_variant"));
}

// count = N: N distinct devices, best first, or an error; never fewer.
TEST_F(PlacerTest, CountPlacesDistinctDevicesAllOrNothing) {
  AddNode("a",
          {MakeDevice("a", 0, Kind::kH100), MakeDevice("a", 1, Kind::kH100),
           MakeDevice("a", 2, Kind::kH100), MakeDevice("a", -1, Kind::kXeon)});
  Job job = SaxpyJob();
  job.required_kind = "gpu";
  job.count = 3;
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ranks.size(), 3u);
  std::set<std::string> devices;
  for (const Choice& c : p->ranks) devices.insert(c.device.id);
  EXPECT_EQ(devices, (std::set<std::string>{"a/0", "a/1", "a/2"}));
  EXPECT_EQ(p->ranks[0].device.id, p->choice.device.id);

  job.count = 4;
  p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(),
              HasSubstr("count 4 for kernel 'saxpy' (all or nothing): only 3 "
                        "distinct devices fit"));
  // Without required_kind every device competes, best first: the host
  // CPU's saxpy_avx (score 6) before the GPUs' saxpy_cuda (4).
  job.required_kind.clear();
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->ranks.size(), 4u);
  EXPECT_EQ(p->ranks[0].device.id, "a/host");
  EXPECT_EQ(p->ranks[0].variant_name(), "saxpy_avx");
  EXPECT_EQ(p->ranks[3].variant_name(), "saxpy_cuda");
  // A one-device job keeps ranks empty.
  job.count = 1;
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->ranks.empty());
}

TEST_F(PlacerTest, NoFittingDeviceSaysWhyEachClassWasRejected) {
  Job job = SaxpyJob();
  absl::StatusOr<Placement> p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("no live devices"));

  AddNode("a",
          {MakeDevice("a", 0, Kind::kMi250), MakeDevice("a", 1, Kind::kH100)});
  job.device_filter = "device={kind(fpga)}";
  p = placer_.Select(job);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  // Each class by its short name; the trait form ran to ~460 characters
  // a class for a real CPU.
  EXPECT_THAT(p.status().message(), HasSubstr("amd_gpu_gfx90a: "));
  EXPECT_THAT(p.status().message(), HasSubstr("nvidia_gpu_sm_90: "));
  EXPECT_THAT(p.status().message(), Not(HasSubstr("arch(")));
  EXPECT_THAT(p.status().message(), HasSubstr("device_filter: "));
  absl::StatusOr<PlacementReport> r = placer_.Explain(job);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r->ToText(), HasSubstr("no placement"));
}

TEST_F(PlacerTest, BadRequests) {
  Job job;
  job.kernel = "nope";
  EXPECT_EQ(placer_.Select(job).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(placer_.Explain(job).status().code(), absl::StatusCode::kNotFound);
  job.kernel = "";
  EXPECT_EQ(placer_.Select(job).status().code(),
            absl::StatusCode::kInvalidArgument);
  job = SaxpyJob();
  job.device_filter = "device={arch(nvptx)";
  absl::StatusOr<Placement> p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("device_filter: 1:"));
  // A filter means what it means in ListDevices: no job variable decides it.
  job.device_filter = "user={condition(N > 4)}";
  job.variables["N"] = 8;
  p = placer_.Select(job);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              HasSubstr("job.device_filter: 1:1: a device filter names only"));
  AddNode("a", {MakeDevice("a", 0, Kind::kH100)});
  job = SaxpyJob();
  for (int i = 0; i <= selector::kMaxConstructTraits; ++i) {
    selector::ConstructTrait parallel;
    parallel.name = "parallel";
    job.construct.push_back(parallel);
  }
  EXPECT_EQ(placer_.Select(job).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PlacerTest, ConstructSignatureChangesScores) {
  ASSERT_TRUE(
      placer_
          .SetVariants(
              "red",
              {MakeVariant("red", "red_teams",
                           "construct={teams}, device={arch(nvptx)}", 0),
               MakeVariant("red", "red_plain", "device={arch(amdgcn)}", 1)})
          .ok());
  AddNode("a",
          {MakeDevice("a", 0, Kind::kH100), MakeDevice("a", 1, Kind::kMi250)});
  Job job;
  job.kernel = "red";
  // Without teams in the job, red_teams does not apply: only the MI250X has
  // a variant.
  EXPECT_EQ(Pick(placer_, job), "red_plain");
  job.construct.resize(2);
  job.construct[0].name = "target";
  job.construct[1].name = "teams";
  EXPECT_EQ(Pick(placer_, job), "red_teams");
  job.construct.clear();
  EXPECT_EQ(Pick(placer_, job), "red_plain");
}

TEST_F(PlacerTest, AlternativesListWinnersThenOtherClasses) {
  AddNode(
      "a",
      {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kMi250, 0.4),
       MakeDevice("a", 1, Kind::kMi250, 0.2), MakeDevice("a", 2, Kind::kH100)});
  Job job = SaxpyJob();
  job.top_k = 3;
  absl::StatusOr<Placement> p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.device.id, "a/1");
  ASSERT_EQ(p->alternatives.size(), 3u);
  EXPECT_EQ(p->alternatives[0].device.id, "a/0");            // the other MI250X
  EXPECT_EQ(p->alternatives[1].variant->name, "saxpy_avx");  // score 6
  EXPECT_EQ(p->alternatives[2].variant->name, "saxpy_cuda");  // score 4
  job.top_k = 1;
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->alternatives.size(), 1u);
}

TEST_F(PlacerTest, ExplainReportsEveryClassAndVariant) {
  AddNode("a",
          {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kH100)});
  Job job = SaxpyJob();
  job.device_filter = "device={kind(gpu)}";
  absl::StatusOr<PlacementReport> r = placer_.Explain(job);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->status.ok()) << r->status;
  ASSERT_EQ(r->classes.size(), 2u);
  const ClassReport* gpu = nullptr;
  const ClassReport* cpu = nullptr;
  for (const ClassReport& c : r->classes) {
    (c.traits.kind.count("gpu") ? gpu : cpu) = &c;
  }
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(gpu->eligible);
  EXPECT_TRUE(gpu->winner);
  EXPECT_EQ(gpu->sycl_architecture, "nvidia_gpu_sm_90");
  ASSERT_EQ(gpu->explanation.candidates.size(), 3u);
  EXPECT_TRUE(gpu->explanation.candidates[0].selected);
  EXPECT_FALSE(gpu->explanation.candidates[1].compatible);
  EXPECT_FALSE(cpu->eligible);
  EXPECT_THAT(cpu->reason, HasSubstr("device_filter"));
  std::string text = r->ToText();
  EXPECT_THAT(text, HasSubstr("placement: saxpy_cuda"));
  EXPECT_THAT(text, HasSubstr("WINNER"));
  EXPECT_THAT(text, HasSubstr("rejected: device_filter"));
  EXPECT_THAT(text, HasSubstr("saxpy_hip"));
}

// The explanation, whole: written piece by piece through a stack buffer,
// once within it and once past its size (long names, several runtime-only
// variants), it reads as the phrases say.
TEST_F(PlacerTest, ExplanationTextWholeShortAndLong) {
  AddNode("a",
          {MakeDevice("a", -1, Kind::kXeon), MakeDevice("a", 0, Kind::kH100),
           MakeDevice("a", 1, Kind::kMi250, 0.9)});
  absl::StatusOr<Placement> p = placer_.Select(SaxpyJob());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->explanation,
            "variant 'saxpy_hip' (score 8) on device class " +
                p->choice.device_class->short_name +
                ": best of 3 eligible classes.\n"
                "least_loaded picked device 'a/1' on node 'a' (utilisation "
                "0.9) among 1 devices.");

  const std::string tuned(250, 't'), plan(250, 'p'), small(250, 's');
  ASSERT_TRUE(
      placer_
          .SetVariants(
              "fft",
              {MakeVariant("fft", tuned,
                           "device={arch(nvptx)}, "
                           "user={condition(score(9): tuned_for(n))}",
                           0),
               MakeVariant("fft", plan,
                           "device={arch(nvptx)}, "
                           "user={condition(score(3): plan.ok)}",
                           1),
               MakeVariant("fft", small, "device={arch(nvptx), kind(gpu)}", 2)})
          .ok());
  Job job;
  job.kernel = "fft";
  p = placer_.Select(job);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->choice.variant->name, small);
  const std::string text =
      "variant '" + small + "' (score " + std::to_string(p->choice.score) +
      ") on device class " + p->choice.device_class->short_name +
      ": best of 3 eligible classes; ranked above it with a runtime-only "
      "condition the program decides: '" +
      tuned + "', '" + plan +
      "'.\n"
      "least_loaded picked device 'a/0' on node 'a' (utilisation 0) among 1 "
      "devices.";
  EXPECT_GT(text.size(), 512u);
  EXPECT_EQ(p->explanation, text);
}

}  // namespace
TEST_F(PlacerTest, SuspectNodesServeOnlyWhenNoHealthyDeviceCan) {
  // MI250X outscores H100 for saxpy; its only node goes suspect.
  AddNode("amd", {MakeDevice("amd", 0, Kind::kMi250)});
  AddNode("nv", {MakeDevice("nv", 0, Kind::kH100, 0.9)});
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "amd/0");
  placer_.SetNodeSuspect("amd", true);
  // A healthy device can serve: the lower-scored class on it wins.
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "nv/0");
  absl::StatusOr<PlacementReport> report = placer_.Explain(SaxpyJob());
  ASSERT_TRUE(report.ok());
  bool saw_suspect = false;
  for (const ClassReport& c : report->classes) {
    if (c.suspect_device_count == 0) continue;
    saw_suspect = true;
    EXPECT_FALSE(c.eligible);
    EXPECT_THAT(c.reason, ::testing::HasSubstr("suspect nodes"));
  }
  EXPECT_TRUE(saw_suspect);
  EXPECT_THAT(report->ToText(), ::testing::HasSubstr("1 on suspect nodes"));
  // None can: the suspect one does.
  Job only_amd = SaxpyJob();
  only_amd.nodes = {"amd"};
  EXPECT_EQ(DeviceOf(placer_, only_amd), "amd/0");
  placer_.SetNodeSuspect("amd", false);
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "amd/0");
}

}  // namespace ctxsel::server::placement
