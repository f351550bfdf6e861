// Agents leave a replica that cannot serve them (issue 22, items 2 and 3):
// a real etcd, two real ctxsel-server replicas on it, A reaching etcd
// through a TcpProxy (tests/testing/tcp_proxy.h), and a real agent given
// the list "A,B". Cut off from etcd, A goes stale and ends the agent's
// heartbeat stream (STORE_UNAVAILABLE); paused (SIGSTOP), A leaves a beat
// unanswered. Either way the agent moves to the next replica of its list
// and reports there, so B goes on listing the node's GPUs. Before, the
// agent stayed on A (a cut-off A answered its beats; a paused A's kernel
// accepted the new connection of a channel that failed over to the first
// address again), A's node lease lapsed after 5 s, and the node was gone
// from B for the whole fault. Prints the figures on lines starting
// "MEASURE".
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_process.h"
#include "tests/testing/etcd_replicas.h"
#include "tests/testing/eventually.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

constexpr char kHeartbeat[] = "500ms";
constexpr char kGpus[] = "device={kind(gpu)}";
constexpr int kGpuCount = 2;
constexpr char kDevicesJson[] = R"({"devices": [
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90"}
]})";
// Each fault lasts past the paused or cut-off replica's node lease (5 s).
constexpr absl::Duration kFault = absl::Seconds(12);
// The stated bounds (docs/deployment.md, "Agents"), from the fault's start
// to B listing the node's GPUs at every look until the fault ends. Paused:
// a beat (0.5 s), its answer timeout (2 s), a reconnect backoff (up to a
// beat) and the report: about 3 s; the issue's bound is 5 s. Cut off: A
// says it is stale after about 3 s (its watch's progress bound), then the
// same beat, backoff and report: 8 s leaves the 2-core CI machine room.
constexpr absl::Duration kPausedBound = absl::Seconds(5);
constexpr absl::Duration kCutOffBound = absl::Seconds(8);
// How long B is watched after a partition heals: A in step again (its
// watch's backoff, 2 s at most), then over two node TTLs (1.5 s).
constexpr absl::Duration kHealed = absl::Seconds(6);

class AgentFailoverE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    // A reaches etcd through the proxy.
    auto replicas = EtcdReplicas::Start(
        *etcd_, {.replicas = 2, .heartbeat = kHeartbeat, .proxied = 0});
    ASSERT_TRUE(replicas.ok()) << replicas.status();
    replicas_ = *std::move(replicas);
    auto agent = replicas_->StartAgent("node0", kDevicesJson, /*first=*/0);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    b_ = client::CtxselClient::Connect(B(), std::chrono::milliseconds(1000));
    ASSERT_TRUE(Eventually([&] { return GpusOnB() == kGpuCount; },
                           std::chrono::seconds(20)))
        << "B never listed node0's GPUs";
  }

  void TearDown() override {
    if (replicas_ == nullptr) return;
    replicas_->proxy()->Heal();
    replicas_->replica(0).process().Signal(SIGCONT);
    if (agent_ != nullptr) {
      agent_->Signal(SIGTERM);
      agent_->Wait(std::chrono::seconds(5));
    }
    if (HasFailure()) {
      for (int r = 0; r < 2; ++r) {
        std::printf("--- replica %c log:\n%s\n", "AB"[r],
                    replicas_ -> replica(r).Log().c_str());
      }
      std::ifstream log(replicas_->dir() + "/node0.log");
      std::printf("--- agent log:\n%s\n",
                  std::string(std::istreambuf_iterator<char>(log), {}).c_str());
    }
  }

  std::string A() const { return replicas_->address(0); }
  std::string B() const { return replicas_->address(1); }

  int GpusOnB() {
    auto gpus = b_->ListDevices(kGpus, "");
    return gpus.ok() ? static_cast<int>(gpus->size()) : -1;
  }

  // For `watch` from now: from when on B listed every GPU of node0 at every
  // look (infinite when it did not at the last), and the longest stretch
  // of looks that found fewer.
  struct Looks {
    absl::Duration listed_since = absl::InfiniteDuration();
    absl::Duration longest_gap;
  };
  Looks WatchB(absl::Duration watch = kFault) {
    Looks looks;
    const absl::Time start = absl::Now();
    absl::Time gap_start = absl::InfiniteFuture();
    looks.listed_since = absl::ZeroDuration();
    while (absl::Now() - start < watch) {
      const absl::Time now = absl::Now();
      if (GpusOnB() == kGpuCount) {
        if (gap_start != absl::InfiniteFuture()) {
          looks.longest_gap = std::max(looks.longest_gap, now - gap_start);
          gap_start = absl::InfiniteFuture();
        }
      } else {
        if (gap_start == absl::InfiniteFuture()) gap_start = now;
        looks.listed_since = absl::InfiniteDuration();
      }
      if (looks.listed_since == absl::InfiniteDuration() &&
          gap_start == absl::InfiniteFuture()) {
        looks.listed_since = now - start;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    if (gap_start != absl::InfiniteFuture()) {
      looks.longest_gap = std::max(looks.longest_gap, absl::Now() - gap_start);
    }
    return looks;
  }

  static std::string Seconds(absl::Duration d) {
    return d == absl::InfiniteDuration()
               ? "never"
               : absl::StrCat(absl::ToDoubleSeconds(d), " s");
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<EtcdReplicas> replicas_;
  std::unique_ptr<Subprocess> agent_;
  std::unique_ptr<client::CtxselClient> b_;
};

// A replica cut off from etcd must not keep its agent: the node would
// vanish from every other replica when its lease lapses.
TEST_F(AgentFailoverE2E, AnAgentLeavesAReplicaCutOffFromEtcd) {
  replicas_->proxy()->Partition();
  const Looks looks = WatchB();
  replicas_->proxy()->Heal();
  std::printf(
      "MEASURE cut off: B lists node0's GPUs at every look from %s on; "
      "longest gap %s\n",
      Seconds(looks.listed_since).c_str(), Seconds(looks.longest_gap).c_str());
  EXPECT_LE(looks.listed_since, kCutOffBound);
  // Healed, A is in step again: its lease lapsed meanwhile, and writing its
  // nodes again must not take node0 from B, which its agent reports to.
  const Looks healed = WatchB(kHealed);
  std::printf("MEASURE healed: longest gap on B %s\n",
              Seconds(healed.longest_gap).c_str());
  EXPECT_EQ(healed.longest_gap, absl::ZeroDuration());
}

// A paused replica's agent reports to another before the paused replica's
// node lease lapses.
TEST_F(AgentFailoverE2E, AnAgentLeavesAPausedReplica) {
  ASSERT_TRUE(replicas_->replica(0).process().Stop())
      << "replica A did not stop";
  const Looks looks = WatchB();
  replicas_->replica(0).process().Signal(SIGCONT);
  std::printf(
      "MEASURE paused: B lists node0's GPUs at every look from %s on; "
      "longest gap %s\n",
      Seconds(looks.listed_since).c_str(), Seconds(looks.longest_gap).c_str());
  EXPECT_LE(looks.listed_since, kPausedBound);
}

}  // namespace
}  // namespace ctxsel::testing
