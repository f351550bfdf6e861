// PlaceStep (slurm/step_placement.h), the SPANK plugin's core, and its
// ClaimRenewer against a real ctxsel-server, with the step's environment
// given as a map: what the plugin decides, on any machine, Slurm or not
// (slurm_e2e_test runs it inside a real slurmstepd).
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "slurm/claim_renewer.h"
#include "slurm/step_placement.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::slurm {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

class StepPlacementE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::ServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = client::CtxselClient::Connect(server_->address());
    v1::Node node =
        testing::GpuNode("n1", "nvidia", "nvptx", "nvidia_gpu_sm_90", 2);
    node.mutable_devices(1)->set_uuid("GPU-a0");
    node.mutable_devices(2)->set_uuid("GPU-a1");
    ASSERT_TRUE(client_->ReportNode(node).ok());
    v1::RegisterVariantsRequest variants;
    variants.set_kernel("saxpy");
    v1::Variant* sm90 = variants.add_variants();
    sm90->set_name("saxpy_sm90");
    sm90->set_selector("construct={target}, device={arch(nvptx)}");
    ASSERT_TRUE(client_->RegisterVariants(variants).ok());
  }

  StepRequest Request(std::vector<int> ranks) {
    StepRequest request;
    request.job.set_kernel("saxpy");
    request.job.add_construct()->set_name("target");
    request.node = "n1";
    request.holder = "slurm-42.0";
    request.server = server_->address();
    request.ranks = std::move(ranks);
    return request;
  }

  std::vector<TaskPlacement> Place(const StepRequest& request,
                                   std::map<std::string, std::string> env) {
    return PlaceStep(*client_, request, [env](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  }

  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<client::CtxselClient> client_;
};

TEST_F(StepPlacementE2E, EachRankGetsItsOwnGpuOfTheAllocation) {
  std::vector<TaskPlacement> tasks =
      Place(Request({0, 1}), {{"SLURM_STEP_GPUS", "0,1"}});
  ASSERT_EQ(tasks.size(), 2u);
  for (const TaskPlacement& t : tasks) {
    ASSERT_TRUE(t.status.ok()) << t.status;
    EXPECT_FALSE(t.claim_id.empty());
    EXPECT_THAT(t.environment, Contains(Pair("CTXSEL_VARIANT", "saxpy_sm90")));
  }
  EXPECT_NE(tasks[0].environment, tasks[1].environment);
  auto claims = client_->ListClaims("n1");
  ASSERT_TRUE(claims.ok());
  ASSERT_EQ(claims->size(), 2u);
  EXPECT_EQ((*claims)[0].holder(), "slurm-42.0");

  // One GPU given: only that one, even though the other is free.
  ASSERT_EQ(*client_->ReleaseClaimsOf("slurm-42.0"), 2);
  tasks = Place(Request({0}), {{"SLURM_STEP_GPUS", "1"}});
  ASSERT_TRUE(tasks[0].status.ok()) << tasks[0].status;
  EXPECT_THAT(tasks[0].environment,
              Contains(Pair("CUDA_VISIBLE_DEVICES", "GPU-a1")));
}

TEST_F(StepPlacementE2E, TheRankBeyondTheAllocationFailsOrRunsTheBase) {
  std::vector<TaskPlacement> tasks =
      Place(Request({0, 1, 2}), {{"SLURM_STEP_GPUS", "0-1"}});
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_TRUE(tasks[0].status.ok() && tasks[1].status.ok());
  EXPECT_THAT(tasks[2].status.message(),
              HasSubstr("ctxsel: rank 2 of slurm-42.0: every device of the "
                        "step's allocation (SLURM_STEP_GPUS=0-1) that fits "
                        "saxpy is claimed: RESOURCE_EXHAUSTED"));
  ASSERT_EQ(*client_->ReleaseClaimsOf("slurm-42.0"), 2);

  StepRequest base = Request({0, 1, 2});
  base.fallback = Fallback::kBase;
  tasks = Place(base, {{"SLURM_STEP_GPUS", "0,1"}});
  ASSERT_TRUE(tasks[2].status.ok()) << tasks[2].status;
  EXPECT_TRUE(tasks[2].claim_id.empty());
  EXPECT_THAT(tasks[2].environment, Contains(Pair("CTXSEL_VARIANT", "saxpy")));
  EXPECT_THAT(tasks[2].environment,
              Contains(Pair("OMP_TARGET_OFFLOAD", "DISABLED")));
  EXPECT_THAT(tasks[2].note, HasSubstr("(fallback=base)"));
}

TEST_F(StepPlacementE2E, AStepWithoutGpusRunsOnTheHostUnclaimed) {
  std::vector<TaskPlacement> tasks = Place(Request({0, 1}), {});
  for (const TaskPlacement& t : tasks) {
    ASSERT_TRUE(t.status.ok()) << t.status;
    EXPECT_TRUE(t.claim_id.empty());
    EXPECT_THAT(t.environment, Contains(Pair("CTXSEL_DEVICE", "n1/cpu0")));
  }
  EXPECT_THAT(*client_->ListClaims("n1"), IsEmpty());
}

TEST_F(StepPlacementE2E, ErrorsThatAreNotAboutDevicesFailEveryRank) {
  // An index the node does not have: the allocation names no device.
  std::vector<TaskPlacement> tasks =
      Place(Request({0, 1}), {{"SLURM_STEP_GPUS", "7"}});
  for (const TaskPlacement& t : tasks) {
    EXPECT_THAT(t.status.message(),
                HasSubstr("SLURM_STEP_GPUS=7: '7': node n1 has no device "
                          "with vendor index 7"));
  }
  StepRequest unknown = Request({0, 1});
  unknown.job.set_kernel("nosuch");
  tasks = Place(unknown, {{"SLURM_STEP_GPUS", "0,1"}});
  EXPECT_THAT(tasks[1].status.message(),
              HasSubstr("ctxsel: rank 1 of slurm-42.0: ctxsel server"));
  StepRequest elsewhere = Request({0});
  elsewhere.node = "n9";
  tasks = Place(elsewhere, {});
  EXPECT_THAT(tasks[0].status.message(),
              HasSubstr("knows no device of node n9"));
  EXPECT_THAT(*client_->ListClaims(""), IsEmpty());
}

TEST_F(StepPlacementE2E, TheRenewerKeepsAClaimPastItsDuration) {
  StepRequest request = Request({0});
  request.claim = absl::Seconds(2);
  std::vector<TaskPlacement> tasks = Place(request, {{"SLURM_STEP_GPUS", "0"}});
  ASSERT_TRUE(tasks[0].status.ok()) << tasks[0].status;
  int errors = 0;
  {
    ClaimRenewer renewer(
        *client_, request.claim,
        [&errors](const std::string&, const absl::Status&) { ++errors; });
    renewer.Add(tasks[0].claim_id);
    std::this_thread::sleep_for(std::chrono::milliseconds(3200));
    auto claims = client_->ListClaims("n1");
    ASSERT_TRUE(claims.ok());
    ASSERT_EQ(claims->size(), 1u) << "the claim ended unrenewed";
    renewer.Remove(tasks[0].claim_id);
  }
  EXPECT_EQ(errors, 0);
  // Not renewed any more: it ends within its two seconds.
  std::this_thread::sleep_for(std::chrono::milliseconds(2300));
  EXPECT_THAT(*client_->ListClaims("n1"), IsEmpty());
}

}  // namespace
}  // namespace ctxsel::slurm
