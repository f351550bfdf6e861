// A claiming Select (Placer::Select with a ClaimCheck): every policy skips
// devices without claim room, lower-ranked classes get their turn when the
// best are full, and RESOURCE_EXHAUSTED counts the fitting devices.
#include <map>
#include <string>
#include <vector>

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/placer.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server::placement {
namespace {

using ::ctxsel::server::placement::testing::Kind;
using ::ctxsel::server::placement::testing::MakeDevice;
using ::ctxsel::server::placement::testing::PlacerTest;
using ::ctxsel::server::placement::testing::SaxpyJob;
using ::testing::HasSubstr;

// Claims held per device; a device has room below its capacity.
class FakeClaims : public ClaimCheck {
 public:
  bool HasRoom(const std::string& device_id,
               const DeviceProperties& device) const override {
    auto it = held.find(device_id);
    return (it == held.end() ? 0 : it->second) < device.claim_capacity;
  }
  std::map<std::string, int> held;
};

// Claims whatever each Select returns, `n` times; the device ids in order.
std::vector<std::string> ClaimEach(const Placer& placer, const Job& job,
                                   FakeClaims& claims, int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<Placement> p = placer.Select(job, &claims);
    if (!p.ok()) {
      ids.push_back(std::string(p.status().message()));
      continue;
    }
    ++claims.held[p->choice.device.id];
    ids.push_back(p->choice.device.id);
  }
  return ids;
}

class PlacerClaimsTest : public PlacerTest {
 protected:
  // Three nodes with two H100s each; utilisation grows with the id.
  void AddGpus() {
    for (const char* node : {"a", "b", "c"}) {
      AddNode(node, {MakeDevice(node, 0, Kind::kH100, 0.1),
                     MakeDevice(node, 1, Kind::kH100, 0.2)});
    }
  }
  Job GpuJob(Policy policy) {
    Job job = SaxpyJob();
    job.policy = policy;
    return job;
  }
};

TEST_F(PlacerClaimsTest, LeastLoadedHandsOutEachDeviceOnce) {
  AddGpus();
  FakeClaims claims;
  EXPECT_THAT(ClaimEach(placer_, GpuJob(Policy::kLeastLoaded), claims, 7),
              ::testing::ElementsAre("a/0", "b/0", "c/0", "a/1", "b/1", "c/1",
                                     "all 6 fitting devices are claimed"));
}

TEST_F(PlacerClaimsTest, PackHandsOutEachDeviceOnce) {
  AddGpus();
  FakeClaims claims;
  EXPECT_THAT(ClaimEach(placer_, GpuJob(Policy::kPack), claims, 7),
              ::testing::ElementsAre("a/1", "b/1", "c/1", "a/0", "b/0", "c/0",
                                     "all 6 fitting devices are claimed"));
}

TEST_F(PlacerClaimsTest, SpreadMovesOnFromAFullNode) {
  AddGpus();
  FakeClaims claims;
  std::vector<std::string> ids =
      ClaimEach(placer_, GpuJob(Policy::kSpread), claims, 7);
  EXPECT_THAT(std::vector<std::string>(ids.begin(), ids.begin() + 6),
              ::testing::UnorderedElementsAre("a/0", "a/1", "b/0", "b/1", "c/0",
                                              "c/1"));
  EXPECT_EQ(ids[6], "all 6 fitting devices are claimed");
}

TEST_F(PlacerClaimsTest, CapacityAboveOneSharesADevice) {
  Device shared = MakeDevice("a", 0, Kind::kH100);
  shared.properties.claim_capacity = 3;
  AddNode("a", {shared});
  FakeClaims claims;
  EXPECT_THAT(ClaimEach(placer_, SaxpyJob(), claims, 4),
              ::testing::ElementsAre("a/0", "a/0", "a/0",
                                     "all 1 fitting devices are claimed"));
}

TEST_F(PlacerClaimsTest, NextBestClassWhenTheBestIsFullyClaimed) {
  // saxpy_hip (MI250X) outscores saxpy_avx (Xeon) outscores saxpy_cuda.
  AddNode("n",
          {MakeDevice("n", -1, Kind::kXeon), MakeDevice("n", 0, Kind::kMi250),
           MakeDevice("n", 1, Kind::kH100)});
  FakeClaims claims;
  claims.held["n/0"] = 1;
  absl::StatusOr<Placement> p = placer_.Select(SaxpyJob(), &claims);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.variant_name(), "saxpy_avx");
  EXPECT_EQ(p->choice.device.id, "n/host");
  EXPECT_THAT(p->explanation, HasSubstr("better classes is claimed"));

  claims.held["n/host"] = 1;
  claims.held["n/1"] = 1;
  absl::Status refused = placer_.Select(SaxpyJob(), &claims).status();
  EXPECT_EQ(refused.ToString(absl::StatusToStringMode::kWithNoExtraData),
            "RESOURCE_EXHAUSTED: all 3 fitting devices are claimed");
  // A reason of its own: a program tells it from a size or rate limit.
  auto info = GetDetail<google::rpc::ErrorInfo>(refused);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), kReasonClaimsExhausted);
  EXPECT_EQ(info->metadata().at("fitting"), "3");
  // Without a ClaimCheck nothing changes: the best class, claimed or not.
  p = placer_.Select(SaxpyJob());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->choice.device.id, "n/0");
}

TEST_F(PlacerClaimsTest, ConstraintsStillComeFirst) {
  AddGpus();
  FakeClaims claims;
  Job job = GpuJob(Policy::kLeastLoaded);
  job.nodes = {"b"};
  EXPECT_THAT(ClaimEach(placer_, job, claims, 3),
              ::testing::ElementsAre("b/0", "b/1",
                                     "all 2 fitting devices are claimed"));
  job.nodes = {"nowhere"};
  EXPECT_EQ(placer_.Select(job, &claims).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ctxsel::server::placement

namespace ctxsel::server::placement {
namespace {

using ::ctxsel::server::placement::testing::DeviceOf;

// Health, cordons and partitions (issue 24): an unhealthy or cordoned
// device is never picked, a degraded one only when nothing healthy fits,
// and a partition and its whole device exclude each other's claims.
class PlacerConditionTest : public PlacerTest {
 protected:
  // Node "a": an idle H100 (a/0) and a busier one (a/1).
  void AddNode(DeviceHealth health0, DeviceHealth health1) {
    Device d0 = MakeDevice("a", 0, Kind::kH100, 0.1);
    Device d1 = MakeDevice("a", 1, Kind::kH100, 0.6);
    d0.condition.health = health0;
    d1.condition.health = health1;
    PlacerTest::AddNode("a", {d0, d1});
  }
};

TEST_F(PlacerConditionTest, UnhealthyIsNeverPickedDegradedOnlyAsALastResort) {
  const Job job = SaxpyJob();
  AddNode(DeviceHealth::kHealthy, DeviceHealth::kHealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  AddNode(DeviceHealth::kUnhealthy, DeviceHealth::kHealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/1");
  AddNode(DeviceHealth::kDegraded, DeviceHealth::kHealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/1");
  AddNode(DeviceHealth::kDegraded, DeviceHealth::kUnhealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
  AddNode(DeviceHealth::kUnhealthy, DeviceHealth::kUnhealthy);
  EXPECT_THAT(DeviceOf(placer_, job), HasSubstr("unhealthy"));
  absl::StatusOr<PlacementReport> report = placer_.Explain(job);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->ToText(), HasSubstr("2 unhealthy left out"));
  AddNode(DeviceHealth::kHealthy, DeviceHealth::kHealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
}

TEST_F(PlacerConditionTest, CordonsExcludeDevicesAndNodesUntilLifted) {
  const Job job = SaxpyJob();
  AddNode(DeviceHealth::kHealthy, DeviceHealth::kHealthy);
  Cordon device;
  device.device = "a/0";
  device.reason = "fan";
  placer_.SetCordons({device});
  EXPECT_EQ(DeviceOf(placer_, job), "a/1");
  std::vector<Device> listed = placer_.NodeDevices("a");
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_TRUE(listed[0].condition.cordoned);
  EXPECT_EQ(listed[0].condition.cordon_reason, "fan");
  EXPECT_FALSE(listed[1].condition.cordoned);
  // A re-report keeps the cordon.
  AddNode(DeviceHealth::kHealthy, DeviceHealth::kHealthy);
  EXPECT_EQ(DeviceOf(placer_, job), "a/1");
  Cordon node;
  node.node = "a";
  node.reason = "maintenance";
  node.drain = true;
  placer_.SetCordons({device, node});
  EXPECT_THAT(DeviceOf(placer_, job), HasSubstr("cordoned"));
  absl::StatusOr<PlacementReport> report = placer_.Explain(job);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->ToText(), HasSubstr("2 cordoned left out"));
  EXPECT_TRUE(placer_.NodeDevices("a")[1].condition.draining);
  placer_.SetCordons({});
  EXPECT_EQ(DeviceOf(placer_, job), "a/0");
}

TEST_F(PlacerConditionTest, APartitionAndItsParentExcludeEachOthersClaims) {
  Device gpu = MakeDevice("a", 0, Kind::kH100, 0.5);
  Device mig0 = MakeDevice("a", 1, Kind::kH100, 0.0);
  Device mig1 = MakeDevice("a", 2, Kind::kH100, 0.1);
  mig0.condition.parent = "a/0";
  mig1.condition.parent = "a/0";
  PlacerTest::AddNode("a", {gpu, mig0, mig1});
  const Job job = SaxpyJob();
  // The instances, then nothing: the GPU is blocked by them.
  FakeClaims claims;
  EXPECT_THAT(ClaimEach(placer_, job, claims, 3),
              ::testing::ElementsAre("a/1", "a/2",
                                     HasSubstr("fitting devices are claimed")));
  // The GPU claimed first: its instances are blocked.
  FakeClaims gpu_first;
  gpu_first.held["a/0"] = 1;
  EXPECT_THAT(ClaimEach(placer_, job, gpu_first, 1),
              ::testing::ElementsAre(HasSubstr("fitting devices are claimed")));
  // One instance claimed: the other is free, the GPU is not.
  FakeClaims one;
  one.held["a/1"] = 1;
  EXPECT_THAT(
      ClaimEach(placer_, job, one, 2),
      ::testing::ElementsAre("a/2", HasSubstr("fitting devices are claimed")));
}

}  // namespace
}  // namespace ctxsel::server::placement
