// Launchers fail over from a paused replica (issue 22, item 3): a real
// etcd, two real ctxsel-server replicas on it, a real agent, and the real
// ctxsel-cli and client library given the list with the paused replica
// first. A SIGSTOPped process's kernel still accepts connections, so a
// client that only moves on when a connection breaks waits on it for its
// whole deadline; per-call failover (client/ctxsel_client.h) answers from
// the other replica within the bound. Prints the measured figures on lines
// starting "MEASURE".
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_process.h"
#include "tests/testing/etcd_replicas.h"
#include "tests/testing/eventually.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

// The stated bound (docs/deployment.md, "Clients"): a call whose first
// replica is paused is answered by another within it. With the default
// 5 s deadline and two replicas, the paused one costs 2.5 s.
constexpr absl::Duration kFailoverBound = absl::Seconds(5);
constexpr std::chrono::milliseconds kTimeout(5000);
constexpr char kHeartbeat[] = "300ms";

constexpr char kDevicesJson[] = R"({"devices": [
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90"}
]})";

class FailoverE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    auto replicas = EtcdReplicas::Start(
        *etcd_, {.replicas = 2, .heartbeat = kHeartbeat, .proxied = -1});
    ASSERT_TRUE(replicas.ok()) << replicas.status();
    replicas_ = *std::move(replicas);
    // The agent reports to B, which stays up: its node stays live.
    auto agent = replicas_->StartAgent("node0", kDevicesJson, /*first=*/1);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    ASSERT_EQ(Cli(A(), {"variants", "register", "saxpy",
                        "saxpy_nv=device={arch(nvptx)}"})
                  .exit_code,
              0);
    for (const std::string& replica : {A(), B()}) {
      ASSERT_TRUE(Eventually(
          [&] {
            auto client = client::CtxselClient::Connect(replica);
            auto gpus = client->ListDevices("device={kind(gpu)}", "");
            return gpus.ok() && gpus->size() == 2 &&
                   client->GetVariant("saxpy", "saxpy_nv").ok();
          },
          std::chrono::seconds(30)))
          << replica << " never saw the node and the variant";
    }
  }

  void TearDown() override {
    if (paused_) replicas_->replica(0).process().Signal(SIGCONT);
    if (agent_ != nullptr) {
      agent_->Signal(SIGTERM);
      agent_->Wait(std::chrono::seconds(5));
    }
  }

  const std::string& A() { return replicas_->address(0); }
  const std::string& B() { return replicas_->address(1); }
  // The list a launcher is given, the paused replica first.
  std::string List() { return replicas_->List(0); }

  // Returns once A has stopped: one call answered after SIGSTOP was sent
  // would reach a running A (and a claim sent to it would then hang).
  void PauseA() {
    paused_ = true;
    ASSERT_TRUE(replicas_->replica(0).process().Stop())
        << "replica A did not stop";
  }
  void ResumeA() {
    replicas_->replica(0).process().Signal(SIGCONT);
    paused_ = false;
  }

  CommandResult Cli(const std::string& server, std::vector<std::string> args) {
    return RunCli(server, std::move(args));
  }

  // The claims of `holder` that `replica` knows.
  int ClaimsOf(const std::string& replica, const std::string& holder) {
    auto claims = client::CtxselClient::Connect(replica)->ListClaims("");
    if (!claims.ok()) return -1;
    int count = 0;
    for (const v1::Claim& claim : *claims) count += claim.holder() == holder;
    return count;
  }

  static v1::SelectRequest ClaimRequest(const std::string& holder) {
    v1::SelectRequest request;
    request.mutable_job()->set_kernel("saxpy");
    request.mutable_job()->set_required_kind("gpu");
    request.mutable_claim()->mutable_duration()->set_seconds(300);
    request.mutable_claim()->set_holder(holder);
    return request;
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<EtcdReplicas> replicas_;
  std::unique_ptr<Subprocess> agent_;
  bool paused_ = false;
};

TEST_F(FailoverE2E, TheCliAnswersFromTheOtherReplicaWhenTheFirstIsPaused) {
  PauseA();
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{
           {"ping"},
           {"devices", "ls"},
           {"select", "--kernel=saxpy", "--claim=5m", "--holder=cli-1",
            "--device_filter=device={kind(gpu)}", "--format=env"}}) {
    const absl::Time start = absl::Now();
    CommandResult result = Cli(List(), command);
    const absl::Duration took = absl::Now() - start;
    EXPECT_EQ(result.exit_code, 0) << command[0] << ": " << result.stderr_text;
    EXPECT_LT(took, kFailoverBound) << command[0];
    std::printf("MEASURE cli %s with the first replica paused: %s\n",
                command[0].c_str(), absl::FormatDuration(took).c_str());
  }
  ResumeA();
  // The claiming Select went out once: one claim, seen by both replicas.
  EXPECT_TRUE(Eventually([&] { return ClaimsOf(A(), "cli-1") == 1; },
                         std::chrono::seconds(10)));
  EXPECT_EQ(ClaimsOf(B(), "cli-1"), 1);
}

TEST_F(FailoverE2E, TheLibraryFailsOverPerCallAndClaimsOnce) {
  auto launcher = client::CtxselClient::Connect(List(), kTimeout);
  // Connected to A before it stops, as a long-lived launcher is.
  ASSERT_TRUE(launcher->Ping().ok());
  PauseA();
  absl::Duration slowest;
  auto timed = [&](const char* what, auto call) {
    const absl::Time start = absl::Now();
    auto result = call();
    const absl::Duration took = absl::Now() - start;
    EXPECT_LT(took, kFailoverBound) << what;
    slowest = std::max(slowest, took);
    std::printf("MEASURE library %s with replica A paused: %s\n", what,
                absl::FormatDuration(took).c_str());
    return result;
  };
  auto claimed = timed("claiming Select",
                       [&] { return launcher->Select(ClaimRequest("lib-1")); });
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const std::string id = claimed->claim().id();
  auto renewed = timed("RenewClaim", [&] {
    return launcher->RenewClaim(id, std::chrono::minutes(5));
  });
  EXPECT_TRUE(renewed.ok()) << renewed.status();
  auto listed = timed("ListDevices", [&] {
    return launcher->ListDevices("device={kind(gpu)}", "");
  });
  EXPECT_TRUE(listed.ok()) << listed.status();
  ResumeA();
  EXPECT_TRUE(Eventually([&] { return ClaimsOf(A(), "lib-1") == 1; },
                         std::chrono::seconds(10)))
      << "the claiming Select was made more than once, or not at all";
  absl::Status released = launcher->ReleaseClaim(id);
  EXPECT_TRUE(released.ok()) << released;
  EXPECT_EQ(ClaimsOf(B(), "lib-1"), 0);
  std::printf("MEASURE library failover bound %s, slowest call %s\n",
              absl::FormatDuration(kFailoverBound).c_str(),
              absl::FormatDuration(slowest).c_str());
}

TEST_F(FailoverE2E, AClaimIsNotSentWhenNoReplicaAnswers) {
  ASSERT_TRUE(replicas_->replica(1).process().Stop())
      << "replica B did not stop";
  PauseA();
  auto launcher =
      client::CtxselClient::Connect(List(), std::chrono::milliseconds(1000));
  auto claimed = launcher->Select(ClaimRequest("lib-2"));
  replicas_->replica(1).process().Signal(SIGCONT);
  ResumeA();
  EXPECT_EQ(claimed.status().code(), absl::StatusCode::kUnavailable)
      << claimed.status();
  EXPECT_THAT(claimed.status().message(), HasSubstr("nothing was sent"));
  // Neither replica makes it once it resumes.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(ClaimsOf(A(), "lib-2"), 0);
  EXPECT_EQ(ClaimsOf(B(), "lib-2"), 0);
}

}  // namespace
}  // namespace ctxsel::testing
