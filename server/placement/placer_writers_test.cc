// Placer writers: classes from reports, node removal, heartbeats,
// validation of reports and variant sets.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer.h"
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

TEST_F(PlacerTest, IdenticalTraitsFormOneClass) {
  AddNode("a",
          {MakeDevice("a", 0, Kind::kH100), MakeDevice("a", 1, Kind::kH100),
           MakeDevice("a", 2, Kind::kMi250)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100)});
  absl::StatusOr<DeviceClassNames> a0 = placer_.DeviceClassOf("a/0");
  ASSERT_TRUE(a0.ok()) << a0.status();
  EXPECT_EQ(a0->name,
            "device={kind(gpu, nohost), arch(nvptx, sm_90), vendor(nvidia)}");
  EXPECT_EQ(a0->short_name, "nvidia_gpu_sm_90");
  EXPECT_EQ(placer_.DeviceClassOf("a/1")->name, a0->name);
  EXPECT_EQ(placer_.DeviceClassOf("b/0")->name, a0->name);
  EXPECT_NE(placer_.DeviceClassOf("a/2")->name, a0->name);
  EXPECT_EQ(placer_.DeviceClassOf("c/0").status().code(),
            absl::StatusCode::kNotFound);

  absl::StatusOr<PlacementReport> r = placer_.Explain(SaxpyJob());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->classes.size(), 2u);  // H100 and MI250X, not one per device
  EXPECT_EQ(r->classes[0].device_count + r->classes[1].device_count, 4);
}

TEST_F(PlacerTest, RemovedNodesAreNeverSelected) {
  AddNode("a", {MakeDevice("a", 0, Kind::kMi250)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100)});
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/0");
  EXPECT_TRUE(placer_.RemoveNode("a"));
  EXPECT_FALSE(placer_.RemoveNode("a"));
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "b/0");
  AddNode("b", {});  // an empty report removes the node too
  EXPECT_EQ(placer_.Select(SaxpyJob()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(placer_.UpdateUtilisations("b", {{"b/0", 0.5}}).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PlacerTest, SetDevicesReplacesTheFleet) {
  AddNode("old", {MakeDevice("old", 0, Kind::kMi250)});
  ASSERT_TRUE(placer_
                  .SetDevices({MakeDevice("x", 0, Kind::kH100, 0.6),
                               MakeDevice("y", 0, Kind::kH100, 0.1)})
                  .ok());
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "y/0");
  EXPECT_FALSE(placer_.RemoveNode("old"));
  Device dup = MakeDevice("z", 0, Kind::kH100);
  dup.id = "x/0";
  absl::Status s = placer_.SetDevices({MakeDevice("x", 0, Kind::kH100), dup});
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "y/0");  // unchanged
}

// A report's own faults are NormalizeReport's to find (node_report_test);
// the one check that needs the fleet is the Placer's, with the code the
// inventory's API has always given.
TEST_F(PlacerTest, AnotherNodesDeviceIdIsAlreadyExists) {
  AddNode("a", {MakeDevice("a", 0, Kind::kH100)});
  Device other = MakeDevice("b", 0, Kind::kH100);
  other.id = "a/0";
  absl::Status s = placer_.SetNodeDevices("b", {other});
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(),
              HasSubstr("node.devices[0].id: 'a/0' belongs to node 'a'"));
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/0");
  EXPECT_THAT(placer_.NodeDevices("b"), ::testing::IsEmpty());
}

TEST_F(PlacerTest, VariantsAreValidatedAndReplaced) {
  std::vector<Variant> v = SaxpyVariants();
  v[1].kernel = "other";
  EXPECT_THAT(placer_.SetVariants("saxpy", v).message(),
              HasSubstr("variants[1] (saxpy_hip).kernel: 'other'"));
  v = SaxpyVariants();
  v[2].name = "saxpy_cuda";
  EXPECT_THAT(placer_.SetVariants("saxpy", v).message(),
              HasSubstr("variants[2] (saxpy_cuda).name: repeated"));
  AddNode("a", {MakeDevice("a", 0, Kind::kH100)});
  EXPECT_EQ(Pick(placer_, SaxpyJob()), "saxpy_cuda");  // old set still there
  ASSERT_TRUE(
      placer_
          .SetVariants("saxpy", {MakeVariant("saxpy", "saxpy_sm90",
                                             "device={arch(sm_90)}", 0)})
          .ok());
  EXPECT_EQ(Pick(placer_, SaxpyJob()), "saxpy_sm90");
  EXPECT_TRUE(placer_.RemoveKernel("saxpy"));
  EXPECT_FALSE(placer_.RemoveKernel("saxpy"));
  EXPECT_EQ(placer_.Select(SaxpyJob()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(PlacerTest, HeartbeatBatchSetsEveryDeviceOfTheNode) {
  AddNode("a", {MakeDevice("a", 0, Kind::kH100, 0.5),
                MakeDevice("a", 1, Kind::kH100, 0.5)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100, 0.3)});
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "b/0");
  ASSERT_TRUE(
      placer_.UpdateUtilisations("a", {{"a/0", 0.9}, {"a/1", 0.2}}).ok());
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/1");
  ASSERT_TRUE(placer_.UpdateUtilisations("a", {}).ok());  // an empty beat
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "a/1");
}

TEST_F(PlacerTest, BadHeartbeatBatchChangesNothing) {
  AddNode("a", {MakeDevice("a", 0, Kind::kH100, 0.5),
                MakeDevice("a", 1, Kind::kH100, 0.5)});
  AddNode("b", {MakeDevice("b", 0, Kind::kH100, 0.4)});
  // b/0 is live, but not a device of node a.
  absl::Status s = placer_.UpdateUtilisations("a", {{"a/0", 0.0}, {"b/0", 1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("updates[1]: device 'b/0'"));
  EXPECT_EQ(placer_.UpdateUtilisations("z", {{"z/0", 0.1}}).code(),
            absl::StatusCode::kNotFound);
  // Neither a/0 nor a/1 moved, nor b/0.
  EXPECT_EQ(DeviceOf(placer_, SaxpyJob()), "b/0");
}

}  // namespace
}  // namespace ctxsel::server::placement
