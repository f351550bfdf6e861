#include "server/placement/coverage.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::Kind;
using testing::MakeDevice;
using testing::MakeVariant;

class CoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        placer_
            .SetVariants(
                "k",
                {MakeVariant("k", "k_nv", "device={arch(nvptx)}", 0),
                 MakeVariant("k", "k_nv_copy", "device={arch(nvptx)}", 1),
                 MakeVariant("k", "k_amd_big",
                             "device={arch(amdgcn)}, "
                             "user={condition(N > 1000)}",
                             2),
                 MakeVariant("k", "k_pvc", "device={arch(intel_gpu_pvc)}", 3)})
            .ok());
    // Two nodes with two H100s and a Xeon; one with an MI250X and a Xeon.
    for (const std::string node : {"n1", "n2"}) {
      ASSERT_TRUE(placer_
                      .SetNodeDevices(node, {MakeDevice(node, -1, Kind::kXeon),
                                             MakeDevice(node, 0, Kind::kH100),
                                             MakeDevice(node, 1, Kind::kH100)})
                      .ok());
    }
    ASSERT_TRUE(placer_
                    .SetNodeDevices("n3", {MakeDevice("n3", -1, Kind::kXeon),
                                           MakeDevice("n3", 0, Kind::kMi250)})
                    .ok());
  }

  CoverageQuery Query() const {
    CoverageQuery q;
    q.job.kernel = "k";
    return q;
  }

  static const ClassCoverage& ClassOf(const CoveragePoint& p,
                                      const std::string& arch) {
    for (const ClassCoverage& c : p.classes) {
      if (c.device_class.find(arch) != std::string::npos) return c;
    }
    ADD_FAILURE() << "no class with " << arch;
    return p.classes.front();
  }

  Placer placer_;
};

TEST_F(CoverageTest, StaticDynamicAndBaseOnlyClasses) {
  absl::StatusOr<CoverageReport> r = placer_.Coverage(Query());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->points.size(), 1u);
  const CoveragePoint& p = r->points[0];
  ASSERT_EQ(p.classes.size(), 3u);

  const ClassCoverage& h100 = ClassOf(p, "nvptx");
  EXPECT_EQ(h100.outcome, CoverageOutcome::kVariant);
  EXPECT_EQ(h100.variant, "k_nv");
  EXPECT_EQ(h100.device_count, 4);
  EXPECT_EQ(h100.node_count, 2);
  EXPECT_THAT(h100.tied_with, ElementsAre("k_nv_copy"));

  const ClassCoverage& mi250 = ClassOf(p, "amdgcn");
  EXPECT_EQ(mi250.outcome, CoverageOutcome::kDepends);
  ASSERT_EQ(mi250.deciding.size(), 1u);
  EXPECT_EQ(mi250.deciding[0].variant, "k_amd_big");
  EXPECT_NE(mi250.deciding[0].selector.find("N > 1000"), std::string::npos)
      << mi250.deciding[0].selector;

  const ClassCoverage& xeon = ClassOf(p, "x86_64");
  EXPECT_EQ(xeon.outcome, CoverageOutcome::kBase);
  EXPECT_EQ(xeon.device_count, 3);
  EXPECT_EQ(xeon.node_count, 3);

  EXPECT_EQ(p.device_count, 8);
  EXPECT_EQ(p.node_count, 3);
  EXPECT_DOUBLE_EQ(p.base_only_share, 3.0 / 8);
  // k_nv: 4 devices on 2 nodes; base: 3 on 3; depends: 1 on 1.
  ASSERT_EQ(p.shares.size(), 3u);
  EXPECT_EQ(p.shares[0].variant, "k_nv");
  EXPECT_EQ(p.shares[0].device_count, 4);
  EXPECT_EQ(p.shares[0].node_count, 2);
  EXPECT_EQ(p.shares[1].outcome, CoverageOutcome::kBase);
  EXPECT_EQ(p.shares[1].node_count, 3);
  EXPECT_EQ(p.shares[2].outcome, CoverageOutcome::kDepends);
  EXPECT_EQ(p.shares[2].device_count, 1);
  // k_nv_copy always loses the tie; no PVC is live.
  EXPECT_THAT(r->dead_variants, ElementsAre("k_nv_copy", "k_pvc"));
  EXPECT_FALSE(r->what_if);
  EXPECT_THAT(p.changes, IsEmpty());
}

TEST_F(CoverageTest, VariableRangesGiveAMatrix) {
  CoverageQuery q = Query();
  q.variable_ranges = {{"N", {1, 64, 4096}}};
  selector::ConstructTrait parallel;
  parallel.name = "parallel";
  q.construct_lists = {{}, {parallel}};
  absl::StatusOr<CoverageReport> r = placer_.Coverage(q);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->points.size(), 6u);
  std::vector<std::string> mi250;
  for (const CoveragePoint& p : r->points) {
    mi250.push_back(ClassOf(p, "amdgcn").OutcomeKey());
  }
  EXPECT_THAT(mi250, ElementsAre("", "", "k_amd_big", "", "", "k_amd_big"));
  EXPECT_EQ(r->points[2].variables.at("N"), 4096);
  EXPECT_EQ(r->points[3].construct.size(), 1u);
  EXPECT_TRUE(ClassOf(r->points[2], "amdgcn").dynamic);
}

TEST_F(CoverageTest, VariablesAreCheckedAsForSelect) {
  CoverageQuery q = Query();
  q.job.variables = {{"M", 1}};
  absl::StatusOr<CoverageReport> r = placer_.Coverage(q);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::HasSubstr("job.variables"));

  q = Query();
  q.job.kernel = "nope";
  EXPECT_EQ(placer_.Coverage(q).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CoverageTest, WhatIfShadowingVariantShowsTheClassesThatSwitch) {
  CoverageQuery q = Query();
  q.job.variables = {{"N", 1}};
  q.with_variants = {
      MakeVariant("k", "k_nv_better", "device={kind(gpu), arch(nvptx)}", 0)};
  absl::StatusOr<CoverageReport> r = placer_.Coverage(q);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->what_if);
  const CoveragePoint& p = r->points[0];
  EXPECT_EQ(ClassOf(p, "nvptx").variant, "k_nv_better");
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_NE(p.changes[0].device_class.find("nvptx"), std::string::npos);
  EXPECT_EQ(p.changes[0].before, "k_nv");
  EXPECT_EQ(p.changes[0].after, "k_nv_better");
  EXPECT_FALSE(p.changes[0].gains_base_only);
  EXPECT_THAT(r->dead_variants,
              ElementsAre("k_nv", "k_nv_copy", "k_amd_big", "k_pvc"));
  // Nothing was stored: Select still sees today's variants.
  Job job;
  job.kernel = "k";
  job.variables = {{"N", 1}};
  job.device_filter = "device={arch(nvptx)}";
  EXPECT_EQ(testing::Pick(placer_, job), "k_nv");
}

TEST_F(CoverageTest, WhatIfWithoutShowsClassesGainingBaseOnly) {
  CoverageQuery q = Query();
  q.without_variants = {"k_nv", "k_nv_copy"};
  absl::StatusOr<CoverageReport> r = placer_.Coverage(q);
  ASSERT_TRUE(r.ok()) << r.status();
  const CoveragePoint& p = r->points[0];
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ(p.changes[0].before, "k_nv");
  EXPECT_EQ(p.changes[0].after, "");
  EXPECT_TRUE(p.changes[0].gains_base_only);
  EXPECT_DOUBLE_EQ(p.base_only_share, 7.0 / 8);

  q.without_variants = {"k_missing"};
  EXPECT_EQ(placer_.Coverage(q).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(CoverageTest, HypotheticalNodesJoinOrAddClassesWithoutEnteringFleet) {
  CoverageQuery q = Query();
  Device pvc;
  pvc.node = "rack/1";
  pvc.id = "rack/1/0";
  pvc.index = 0;
  pvc.traits = {{"gpu", "nohost"}, {"intel_gpu_pvc"}, {}, {"intel"}, {}};
  pvc.sycl_architecture = "intel_gpu_pvc";
  q.hypothetical_devices = {MakeDevice("rack/1", -1, Kind::kXeon), pvc,
                            MakeDevice("rack/1", 1, Kind::kMi250)};
  absl::StatusOr<CoverageReport> r = placer_.Coverage(q);
  ASSERT_TRUE(r.ok()) << r.status();
  const CoveragePoint& p = r->points[0];
  ASSERT_EQ(p.classes.size(), 4u);
  const ClassCoverage& new_pvc = ClassOf(p, "intel_gpu_pvc");
  EXPECT_TRUE(new_pvc.hypothetical);
  EXPECT_EQ(new_pvc.variant, "k_pvc");
  EXPECT_EQ(ClassOf(p, "amdgcn").device_count, 2);
  EXPECT_EQ(ClassOf(p, "amdgcn").node_count, 2);
  EXPECT_EQ(ClassOf(p, "x86_64").node_count, 4);
  EXPECT_EQ(p.node_count, 4);
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_TRUE(p.changes[0].new_class);
  EXPECT_EQ(p.changes[0].after, "k_pvc");
  EXPECT_THAT(r->dead_variants, ElementsAre("k_nv_copy"));
  // The live fleet is unchanged.
  EXPECT_EQ(placer_.Coverage(Query())->points[0].classes.size(), 3u);
}

TEST(CoverageLayoutTest, TargetDeviceSelectorsGiveOneRowPerLayout) {
  Placer placer;
  ASSERT_TRUE(placer
                  .SetVariants("halo", {MakeVariant("halo", "halo_offload",
                                                    "device={kind(cpu)}, "
                                                    "target_device={device_"
                                                    "num(1), kind(gpu)}",
                                                    0),
                                        MakeVariant("halo", "halo_host",
                                                    "device={kind(cpu)}", 1)})
                  .ok());
  ASSERT_TRUE(placer
                  .SetNodeDevices("one", {MakeDevice("one", -1, Kind::kXeon),
                                          MakeDevice("one", 0, Kind::kH100)})
                  .ok());
  for (const std::string node : {"two", "three"}) {
    ASSERT_TRUE(placer
                    .SetNodeDevices(node, {MakeDevice(node, -1, Kind::kXeon),
                                           MakeDevice(node, 0, Kind::kH100),
                                           MakeDevice(node, 1, Kind::kH100)})
                    .ok());
  }
  CoverageQuery q;
  q.job.kernel = "halo";
  absl::StatusOr<CoverageReport> r = placer.Coverage(q);
  ASSERT_TRUE(r.ok()) << r.status();
  const CoveragePoint& p = r->points[0];
  std::vector<std::string> cpu;  // "variant nodes" per CPU row
  for (const ClassCoverage& c : p.classes) {
    // NodeLayoutText, never this process's class ids ("-1:1,0:2").
    EXPECT_THAT(c.node_layout,
                ::testing::MatchesRegex("-1:[^,]+,0(-1)?:nvidia_gpu_sm_90"));
    EXPECT_NE(c.device_class_short_name, "");
    if (c.device_class.find("x86_64") == std::string::npos) continue;
    cpu.push_back(c.variant + " " + std::to_string(c.node_count));
  }
  EXPECT_THAT(cpu,
              ::testing::UnorderedElementsAre("halo_host 1", "halo_offload 2"));
  EXPECT_EQ(p.node_count, 3);
}

}  // namespace
}  // namespace ctxsel::server::placement
