// The claim promise under faults (issue 22, item 6), in the manner of
// etcd's functional tester and Jepsen: a real 3-member etcd, three real
// ctxsel-server replicas on it, two real agents reporting simulated GPUs
// (some shared: claim_capacity 2), a registered kernel, and concurrent
// launchers that claim, renew, release and abandon claims through the C++
// client, failing over across the replicas, while a schedule of faults
// runs: kill -9 of a replica, SIGSTOP of a replica, kill -9 of the etcd
// leader, quorum loss (two members killed), SIGSTOP of the etcd leader, and
// a partition: one replica cut off from every etcd member while it runs
// (its etcd connections go through TcpProxy, black-holed).
// A writer registers variants meanwhile. Every operation goes into a
// history (claim_history.h) that is checked afterwards:
//   (a) no device is ever held by more certain claims than its capacity;
//   (b) no renewal or release hears NOT_FOUND while its claim certainly
//       held its device (a claim deleted before its stored expiry);
//   (c) no claiming Select answers INVALID_ARGUMENT;
//   (d) every acknowledged registration is answered, in order, by every
//       replica at the end, and no registration answered with a definite
//       failure (ABORTED, ...) was stored;
//   (e) after the last fault every replica serves within kServingBound,
//       and claims on devices whose claims expired unreleased succeed at
//       once (each answered within kReclaimBound of its expiry or of
//       being asked);
// and during quorum loss every replica says it is stale (Explain `stale`
// or health "ctxsel.store" NOT_SERVING) within kStaleBound, and goes on
// saying so until quorum is back; once quorum is back a claim succeeds
// within kClaimAfterQuorumBound; while the etcd leader is paused every
// replica lists every GPU at every look (no node lease lapses); and the
// partitioned replica says it is stale (Explain `stale`, and health
// "ctxsel.store" and "ctxsel.v1.Placement" NOT_SERVING) within kStaleBound
// until the partition heals, answers every Ping meanwhile (its etcd calls
// hold no RPC thread), and is in step again after it (e). The agents of
// the paused replica, and of the partitioned one, report to another: the
// other replicas list every GPU at every look from kFailoverBound (paused)
// or kAgentCutOffBound (partitioned) after the fault began until it ends,
// though the replica's node lease (5 s) lapses within the fault.
// The log ends with a summary (lines starting "FAULTS").
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/etcd/claim_history.h"
#include "tests/etcd/fault_workload.h"
#include "tests/testing/etcd_cluster.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/tcp_proxy.h"

namespace ctxsel::testing {
namespace {

using ::testing::IsEmpty;
using Kind = Operation::Kind;

constexpr int kReplicas = 3;
constexpr int kMembers = 3;
constexpr int kNodes = 2;
constexpr int kLaunchers = 6;
// Three GPUs per node, the middle one shared by two claims: 8 places.
constexpr int kGpusPerNode = 3;
constexpr int kPlaces = 8;
constexpr char kDevicesJson[] = R"({"devices": [
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90", "claim_capacity": 2},
  {"sycl_architecture": "nvidia_gpu_sm_90"}
]})";
constexpr char kHeartbeat[] = "500ms";  // node TTL 1.5 s
constexpr char kKernel[] = "saxpy";
constexpr char kGpus[] = "device={kind(gpu)}";
constexpr char kJournal[] = "journal";  // the writer's kernel
// A launcher's call that has no answer within this goes to the next
// replica.
constexpr auto kCallTimeout = std::chrono::milliseconds(3000);
// Slack for placing the servers' wall-clock expiries on the run's clock.
constexpr absl::Duration kTolerance = absl::Milliseconds(5);
// The bounds this test holds the replicas to.
constexpr absl::Duration kStaleBound = absl::Seconds(10);
// Long enough to see that replicas stay stale past kStaleBound.
constexpr absl::Duration kQuorumLoss = absl::Seconds(12);
constexpr absl::Duration kServingBound = absl::Seconds(10);
constexpr absl::Duration kReclaimBound = absl::Seconds(1);
constexpr absl::Duration kPropagationBound = absl::Seconds(5);
// Launchers of a killed or paused replica are answered by another within
// this (the call timeout and one more call).
constexpr absl::Duration kFailoverBound = absl::Seconds(5);
// The paused replica's agents report to another within kFailoverBound
// (docs/deployment.md, "Agents"); the pause outlasts its node lease (5 s),
// so agents that stayed would take their nodes off the other replicas.
constexpr absl::Duration kReplicaPause = absl::Seconds(8);
// The partitioned replica's agents: it says it is stale after about 3 s,
// then ends their streams at their next beat (agent_failover_e2e_test).
constexpr absl::Duration kAgentCutOffBound = absl::Seconds(8);
// A claim succeeds within this once quorum is back (the issue saw 10 s).
constexpr absl::Duration kClaimAfterQuorumBound = absl::Seconds(5);
// The issue saw a 10 s pause of the etcd leader let every node lease lapse.
constexpr absl::Duration kLeaderPause = absl::Seconds(10);
// The replica cut off from etcd, and for how long: past kStaleBound.
constexpr int kPartitioned = 2;
constexpr absl::Duration kPartition = absl::Seconds(14);

// One fault of the schedule, as it happened.
struct Fault {
  std::string name;
  Mono start;
  Mono healed;
  // A fault of one replica: its launchers must be answered by another
  // within kFailoverBound.
  bool replica_fault = false;
};

class FaultsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("faults");
    auto etcd = EtcdCluster::Start(kMembers);
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    for (int m = 0; m < kMembers; ++m) {
      auto proxy = TcpProxy::Start(etcd_->endpoint(m));
      ASSERT_TRUE(proxy.ok()) << proxy.status();
      proxies_.push_back(*std::move(proxy));
    }
    for (int i = 0; i < kReplicas; ++i) {
      auto server = ServerProcess::Start(ReplicaFlags(i));
      ASSERT_TRUE(server.ok()) << server.status();
      replicas_.push_back(*std::move(server));
      addresses_.push_back(replicas_.back()->address());
    }
    for (int i = 0; i < kNodes; ++i) StartAgent(i);
    v1::RegisterVariantsRequest request;
    request.set_kernel(kKernel);
    v1::Variant* variant = request.add_variants();
    variant->set_name("saxpy_nv");
    variant->set_selector("device={arch(nvptx)}");
    auto registered =
        client::CtxselClient::Connect(addresses_[0])->RegisterVariants(request);
    ASSERT_TRUE(registered.ok()) << registered.status();
    for (int r = 0; r < kReplicas; ++r) WaitUntilReady(r);
    auto gpus =
        client::CtxselClient::Connect(addresses_[0])->ListDevices(kGpus, "");
    ASSERT_TRUE(gpus.ok()) << gpus.status();
    int places = 0;
    for (const v1::Device& gpu : *gpus) {
      capacity_[gpu.id()] = std::max(1, gpu.claim_capacity());
      places += capacity_[gpu.id()];
    }
    ASSERT_EQ(places, kPlaces);
  }

  void TearDown() override {
    if (workload_ != nullptr) workload_->Stop();
    for (auto& agent : agents_) agent->Signal(SIGTERM);
    for (auto& agent : agents_) agent->Wait(std::chrono::seconds(5));
    for (auto& replica : replicas_) replica->process().Signal(SIGCONT);
    if (HasFailure()) {
      for (size_t r = 0; r < replicas_.size(); ++r) {
        std::printf("--- replica %zu log (tail):\n%s\n", r,
                    Tail(replicas_[r]->Log()).c_str());
      }
    }
  }

  static std::string Tail(const std::string& text) {
    return text.size() > 6000 ? text.substr(text.size() - 6000) : text;
  }

  // Replica kPartitioned reaches etcd through the proxies.
  std::vector<std::string> ReplicaFlags(int r) {
    std::vector<std::string> flags = etcd_->ServerFlags();
    if (r == kPartitioned) {
      std::vector<std::string> proxied;
      for (const auto& proxy : proxies_) proxied.push_back(proxy->address());
      for (std::string& flag : flags) {
        if (absl::StartsWith(flag, "--store=")) {
          flag = "--store=etcd://" + absl::StrJoin(proxied, ",");
        }
      }
    }
    flags.push_back(absl::StrCat("--heartbeat_interval=", kHeartbeat));
    return flags;
  }

  WorkloadOptions Options() const {
    WorkloadOptions options;
    options.replicas = addresses_;
    options.launchers = kLaunchers;
    options.kernel = kKernel;
    options.device_filter = kGpus;
    options.journal = kJournal;
    options.call_timeout = kCallTimeout;
    return options;
  }

  // Agent i reports node i to the replicas, the list starting at replica i.
  void StartAgent(int i) {
    const std::string node = absl::StrCat("node", i);
    const std::string file = absl::StrCat(dir_, "/", node, ".json");
    std::ofstream(file) << kDevicesJson;
    std::vector<std::string> list;
    for (int r = 0; r < kReplicas; ++r) {
      list.push_back(addresses_[(i + r) % kReplicas]);
    }
    auto agent = Subprocess::Start(
        {RunfilePath("agent/ctxsel-agent"), "--insecure",
         "--server=" + absl::StrJoin(list, ","), "--node_id=" + node,
         "--backends=", "--devices_file=" + file,
         absl::StrCat("--heartbeat=", kHeartbeat)},
        "", absl::StrCat(dir_, "/", node, ".log"));
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents_.push_back(*std::move(agent));
  }

  // Replica r knows every GPU and the kernel.
  void WaitUntilReady(int r) {
    auto client = client::CtxselClient::Connect(addresses_[r]);
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      auto gpus = client->ListDevices(kGpus, "");
      if (gpus.ok() && gpus->size() == kNodes * kGpusPerNode &&
          client->GetVariant(kKernel, "saxpy_nv").ok()) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "replica " << r << " never saw the GPUs and the kernel; log:\n"
           << Tail(replicas_[r]->Log());
  }

  // --- Faults ---

  void KillReplica(int r) {
    replicas_[r]->process().Signal(SIGKILL);
    replicas_[r]->process().Wait(std::chrono::seconds(10));
  }

  // Starts replica r again on its port, so every list still names it.
  void RestartReplica(int r) {
    auto server = ServerProcess::Start(ReplicaFlags(r), replicas_[r]->port());
    ASSERT_TRUE(server.ok()) << server.status();
    replicas_[r] = *std::move(server);
  }

  void Sleep(absl::Duration d) { absl::SleepFor(d); }

  Fault Begin(const std::string& name, bool replica_fault = false) {
    Fault fault;
    fault.name = name;
    fault.start = clock_.Now();
    fault.replica_fault = replica_fault;
    return fault;
  }

  // Runs the schedule; each fault is healed before the next starts.
  void RunFaults() {
    Sleep(absl::Seconds(3));  // warm-up: the launchers in full swing
    {
      Fault f = Begin("kill -9 replica 0, restart after 4s", true);
      KillReplica(0);
      Sleep(absl::Seconds(4));
      RestartReplica(0);
      f.healed = clock_.Now();
      faults_.push_back(f);
      Sleep(absl::Seconds(4));
    }
    {
      Fault f = Begin(
          absl::StrCat("SIGSTOP replica 1 for ", Seconds(kReplicaPause)), true);
      EXPECT_TRUE(replicas_[1]->process().Stop()) << "replica 1 did not stop";
      pause_listed_since_ =
          WatchListed(f.start, f.start + kReplicaPause, /*except=*/1);
      replicas_[1]->process().Signal(SIGCONT);
      f.healed = clock_.Now();
      faults_.push_back(f);
      Sleep(absl::Seconds(4));
    }
    {
      absl::StatusOr<int> leader = etcd_->Leader();
      ASSERT_TRUE(leader.ok()) << leader.status();
      Fault f = Begin(
          absl::StrCat("kill -9 etcd leader m", *leader, ", restart after 4s"));
      etcd_->Kill(*leader);
      Sleep(absl::Seconds(4));
      ASSERT_TRUE(etcd_->Restart(*leader).ok());
      f.healed = clock_.Now();
      faults_.push_back(f);
      ASSERT_TRUE(etcd_->WaitForLeader(std::chrono::seconds(20)).ok());
      Sleep(absl::Seconds(4));
    }
    {
      absl::StatusOr<int> leader = etcd_->Leader();
      ASSERT_TRUE(leader.ok()) << leader.status();
      const int other = (*leader + 1) % kMembers;
      Fault f =
          Begin(absl::StrCat("quorum loss: kill -9 m", *leader, " and m", other,
                             ", restart after ", Seconds(kQuorumLoss)));
      etcd_->Kill(*leader);
      etcd_->Kill(other);
      WatchStaleness(f.start, f.start + kQuorumLoss);
      ASSERT_TRUE(etcd_->Restart(*leader).ok());
      ASSERT_TRUE(etcd_->Restart(other).ok());
      f.healed = clock_.Now();
      faults_.push_back(f);
      ASSERT_TRUE(etcd_->WaitForLeader(std::chrono::seconds(20)).ok());
      Sleep(absl::Seconds(5));
    }
    {
      absl::StatusOr<int> leader = etcd_->Leader();
      ASSERT_TRUE(leader.ok()) << leader.status();
      Fault f = Begin(absl::StrCat("SIGSTOP etcd leader m", *leader, " for ",
                                   Seconds(kLeaderPause)));
      etcd_->Pause(*leader);
      WatchFleet(f.start + kLeaderPause);
      etcd_->Resume(*leader);
      f.healed = clock_.Now();
      faults_.push_back(f);
      ASSERT_TRUE(etcd_->WaitForLeader(std::chrono::seconds(20)).ok());
      Sleep(absl::Seconds(4));
    }
    {
      Fault f =
          Begin(absl::StrCat("partition: replica ", kPartitioned,
                             " cut off from etcd for ", Seconds(kPartition)));
      for (auto& proxy : proxies_) proxy->Partition();
      WatchPartition(f.start, f.start + kPartition);
      for (auto& proxy : proxies_) proxy->Heal();
      f.healed = clock_.Now();
      faults_.push_back(f);
    }
  }

  // How many GPUs replica `r` lists; -1 when it does not answer.
  int GpuCount(client::CtxselClient& client) {
    auto gpus = client.ListDevices(kGpus, "");
    return gpus.ok() ? static_cast<int>(gpus->size()) : -1;
  }

  // From `since` to `until`: for each replica but `except`, from when on
  // it listed every GPU at every look (as StaleSince; zero for `except`).
  std::vector<absl::Duration> WatchListed(Mono since, Mono until, int except) {
    std::vector<std::unique_ptr<client::CtxselClient>> clients;
    for (const std::string& address : addresses_) {
      clients.push_back(client::CtxselClient::Connect(
          address, std::chrono::milliseconds(1000)));
    }
    std::vector<absl::Duration> listed(kReplicas, absl::InfiniteDuration());
    listed[except] = absl::ZeroDuration();
    while (clock_.Now() < until) {
      for (int r = 0; r < kReplicas; ++r) {
        if (r == except) continue;
        const Mono looked = clock_.Now();
        StaleSince(GpuCount(*clients[r]) == kNodes * kGpusPerNode,
                   looked - since, listed[r]);
      }
      Sleep(absl::Milliseconds(100));
    }
    return listed;
  }

  // Until `until`: the fewest GPUs each replica listed at a look.
  void WatchFleet(Mono until) {
    std::vector<std::unique_ptr<client::CtxselClient>> clients;
    for (const std::string& address : addresses_) {
      clients.push_back(client::CtxselClient::Connect(
          address, std::chrono::milliseconds(1000)));
    }
    fewest_gpus_.assign(kReplicas, kNodes * kGpusPerNode);
    while (clock_.Now() < until) {
      for (int r = 0; r < kReplicas; ++r) {
        fewest_gpus_[r] = std::min(fewest_gpus_[r], GpuCount(*clients[r]));
      }
      Sleep(absl::Milliseconds(100));
    }
  }

  // During the partition, from `since` to `until`: when the cut-off
  // replica began saying it was stale (Explain), and NOT_SERVING on
  // "ctxsel.store" and "ctxsel.v1.Placement", at every look after (as
  // StaleSince); the Pings it did not answer within 1 s; the fewest GPUs
  // the other replicas listed.
  void WatchPartition(Mono since, Mono until) {
    auto cut = client::CtxselClient::Connect(addresses_[kPartitioned],
                                             std::chrono::milliseconds(1000));
    std::vector<std::unique_ptr<client::CtxselClient>> clients;
    for (const std::string& address : addresses_) {
      clients.push_back(client::CtxselClient::Connect(
          address, std::chrono::milliseconds(1000)));
    }
    v1::Job job;
    job.set_kernel(kKernel);
    partition_explain_ = absl::InfiniteDuration();
    partition_store_ = absl::InfiniteDuration();
    partition_placement_ = absl::InfiniteDuration();
    partition_fewest_gpus_.assign(kReplicas, kNodes * kGpusPerNode);
    partition_listed_since_.assign(kReplicas, absl::InfiniteDuration());
    partition_listed_since_[kPartitioned] = absl::ZeroDuration();
    while (clock_.Now() < until) {
      const absl::Duration at = clock_.Now() - since;
      auto explained = cut->Explain(job);
      StaleSince(explained.ok() && explained->stale(), at, partition_explain_);
      const std::string& address = addresses_[kPartitioned];
      StaleSince(HealthServing(address, "ctxsel.store",
                               std::chrono::milliseconds(1000)) == false,
                 at, partition_store_);
      StaleSince(HealthServing(address, "ctxsel.v1.Placement",
                               std::chrono::milliseconds(1000)) == false,
                 at, partition_placement_);
      ++partition_pings_;
      if (!cut->Ping().ok()) ++partition_pings_failed_;
      for (int r = 0; r < kReplicas; ++r) {
        if (r == kPartitioned) continue;
        const int gpus = GpuCount(*clients[r]);
        partition_fewest_gpus_[r] = std::min(partition_fewest_gpus_[r], gpus);
        StaleSince(gpus == kNodes * kGpusPerNode, clock_.Now() - since,
                   partition_listed_since_[r]);
      }
      Sleep(absl::Milliseconds(100));
    }
  }

  // `after`: from when on a look found `stale` at every look since;
  // infinite while the last look did not.
  static void StaleSince(bool stale, absl::Duration at, absl::Duration& after) {
    if (!stale) {
      after = absl::InfiniteDuration();
    } else if (after == absl::InfiniteDuration()) {
      after = at;
    }
  }

  // During quorum loss, from `since` to `until`: from when on each replica
  // said it was stale (Explain's `stale` or health "ctxsel.store"
  // NOT_SERVING) at every look until `until`, as time after `since`;
  // infinite when it was not stale at the last look.
  void WatchStaleness(Mono since, Mono until) {
    std::vector<std::unique_ptr<client::CtxselClient>> clients;
    for (const std::string& address : addresses_) {
      clients.push_back(client::CtxselClient::Connect(
          address, std::chrono::milliseconds(1000)));
    }
    stale_after_.assign(kReplicas, absl::InfiniteDuration());
    v1::Job job;
    job.set_kernel(kKernel);
    while (clock_.Now() < until) {
      for (int r = 0; r < kReplicas; ++r) {
        const Mono looked = clock_.Now();
        auto explained = clients[r]->Explain(job);
        const std::optional<bool> store = HealthServing(
            addresses_[r], "ctxsel.store", std::chrono::milliseconds(1000));
        StaleSince((explained.ok() && explained->stale()) || store == false,
                   looked - since, stale_after_[r]);
      }
      Sleep(absl::Milliseconds(100));
    }
  }

  // --- After the faults ---

  // (e) Every replica serves, and follows etcd again: how long after
  // `since` the last one did.
  absl::Duration WaitForAllServing(Mono since) {
    const std::vector<std::string> services = {"", "ctxsel.store",
                                               "ctxsel.v1.Placement"};
    for (int r = 0; r < kReplicas; ++r) {
      for (const std::string& service : services) {
        std::optional<bool> serving;
        while ((serving = HealthServing(addresses_[r], service,
                                        std::chrono::seconds(1))) != true) {
          if (clock_.Now() - since > kServingBound + absl::Seconds(20)) {
            ADD_FAILURE() << "replica " << r << " health '" << service << "': "
                          << (serving.has_value() ? "NOT_SERVING"
                                                  : "no answer");
            break;
          }
          Sleep(absl::Milliseconds(50));
        }
      }
    }
    return clock_.Now() - since;
  }

  // (e) Fills every place with a 2 s claim (on the replicas in turn), lets
  // them expire unreleased, and claims every place again at once on the
  // replicas in turn (each claim made elsewhere than the one it replaces).
  // Returns how long after the last expiry the last place was claimed.
  absl::Duration ReclaimAfterExpiry() {
    // Its operations go in the history too, as one more launcher's.
    ClaimingClient prober(Options(), kLaunchers, clock_, history_);
    Mono last_expiry;
    for (int i = 0; i < kPlaces; ++i) {
      prober.set_replica(i);
      std::optional<ClaimingClient::Held> held = prober.Claim(absl::Seconds(2));
      EXPECT_TRUE(held.has_value()) << "place " << i << " not claimed";
      if (held.has_value()) last_expiry = std::max(last_expiry, held->expiry);
    }
    EXPECT_FALSE(prober.Claim(absl::Seconds(2)).has_value())
        << "a ninth claim on eight places";
    Sleep(last_expiry - clock_.Now());
    for (int i = 0; i < kPlaces; ++i) {
      prober.set_replica(i + 1);
      const Mono asked = clock_.Now();
      std::optional<ClaimingClient::Held> held = prober.Claim(absl::Seconds(2));
      EXPECT_TRUE(held.has_value())
          << "place " << i << " not claimed again after its claim expired";
      EXPECT_LE(clock_.Now() - std::max(asked, last_expiry), kReclaimBound)
          << "place " << i;
    }
    return clock_.Now() - last_expiry;
  }

  // (d) Every registration acknowledged (or found stored) is answered by
  // every replica, in the order it was made.
  void CheckRegistrations(const Registrations& registrations) {
    std::vector<Registration> all = registrations.acknowledged;
    all.insert(all.end(), registrations.found.begin(),
               registrations.found.end());
    std::sort(all.begin(), all.end(),
              [](const Registration& a, const Registration& b) {
                return a.completed < b.completed;
              });
    std::vector<std::string> made;
    for (const Registration& r : all) made.push_back(r.name);
    const std::vector<Registration>& acknowledged = registrations.acknowledged;
    for (size_t i = 1; i < acknowledged.size(); ++i) {
      EXPECT_LT(acknowledged[i - 1].revision, acknowledged[i].revision)
          << acknowledged[i - 1].name << " then " << acknowledged[i].name;
    }
    EXPECT_THAT(registrations.false_refusals, IsEmpty());
    // How many of `made`, in order, are among `answered`.
    auto in_order = [&made](const std::vector<std::string>& answered) {
      size_t next = 0;
      for (const std::string& name : answered) {
        if (next < made.size() && name == made[next]) ++next;
      }
      return next;
    };
    for (int r = 0; r < kReplicas; ++r) {
      auto client = client::CtxselClient::Connect(addresses_[r]);
      std::vector<std::string> answered;
      const Mono since = clock_.Now();
      do {
        answered.clear();
        auto listed = client->ListVariants(kJournal);
        if (listed.ok()) {
          for (const v1::Variant& v : *listed) answered.push_back(v.name());
        }
        if (in_order(answered) == made.size()) break;
        Sleep(absl::Milliseconds(50));
      } while (clock_.Now() - since < kPropagationBound);
      const size_t next = in_order(answered);
      EXPECT_EQ(next, made.size())
          << "replica " << r << " lost or reordered registration "
          << (next < made.size() ? made[next] : "") << "; it answers "
          << absl::StrJoin(answered, ",");
    }
  }

  // --- The summary ---

  // How long launchers waited for an answer (anything but UNAVAILABLE or
  // DEADLINE_EXCEEDED) after `since`: for each, from its first call
  // still open at `since` (or made after it) to the first answer it got;
  // the longest.
  absl::Duration LongestWaitAfter(const std::vector<Operation>& ops,
                                  Mono since) {
    absl::Duration longest;
    for (int l = 0; l < kLaunchers; ++l) {
      Mono asked = absl::InfiniteDuration();
      Mono answered = absl::InfiniteDuration();
      for (const Operation& op : ops) {
        if (op.process != l || op.completed < since) continue;
        asked = std::min(asked, std::max(op.invoked, since));
        if (!Unanswered(op.code)) answered = std::min(answered, op.completed);
      }
      if (asked != absl::InfiniteDuration()) {
        longest = std::max(longest, answered - asked);
      }
    }
    return longest;
  }

  // The first acknowledged claim invoked after `since`: how long after.
  absl::Duration FirstClaimAfter(const std::vector<Operation>& ops,
                                 Mono since) {
    Mono first = absl::InfiniteDuration();
    for (const Operation& op : ops) {
      if (op.kind == Kind::kClaim && op.code == absl::StatusCode::kOk &&
          op.invoked >= since) {
        first = std::min(first, op.completed);
      }
    }
    return first - since;
  }

  // Lines starting "FAULTS": what ran, what it answered, each fault and
  // how the replicas came through it, and the checker's verdict.
  void PrintSummary(const std::vector<Operation>& ops, const ClaimCheck& check,
                    const Registrations& registrations, absl::Duration run,
                    absl::Duration serving, absl::Duration reclaim) {
    std::map<Kind, std::map<absl::StatusCode, int>> outcomes;
    std::map<std::pair<Kind, absl::StatusCode>, std::string> example;
    for (const Operation& op : ops) {
      outcomes[op.kind][op.code]++;
      example.emplace(std::make_pair(op.kind, op.code), op.message);
    }
    std::printf(
        "FAULTS run %s with %d launchers, %d replicas, %d etcd members: "
        "%zu operations\n",
        Seconds(run).c_str(), kLaunchers, kReplicas, kMembers, ops.size());
    for (const auto& [kind, codes] : outcomes) {
      std::printf("FAULTS %s: %s\n", KindName(kind).c_str(),
                  Counts(codes).c_str());
    }
    for (const auto& [kind_code, message] : example) {
      if (message.empty()) continue;
      std::printf("FAULTS e.g. %s %s: %s\n", KindName(kind_code.first).c_str(),
                  absl::StatusCodeToString(kind_code.second).c_str(),
                  message.c_str());
    }
    std::printf(
        "FAULTS registrations: %zu acknowledged, %zu found stored "
        "after a failure answer (%zu of them after definite ones); "
        "attempts: %s\n",
        registrations.acknowledged.size(), registrations.found.size(),
        registrations.false_refusals.size(),
        Counts(registrations.codes).c_str());
    for (const std::string& refusal : registrations.false_refusals) {
      std::printf("FAULTS violation: %s\n", refusal.c_str());
    }
    for (size_t i = 0; i < faults_.size(); ++i) {
      const Fault& f = faults_[i];
      const Mono window_end =
          i + 1 < faults_.size() ? faults_[i + 1].start : stopped_;
      std::map<absl::StatusCode, int> codes;
      for (const Operation& op : ops) {
        if (op.kind == Kind::kClaim && op.invoked >= f.start &&
            op.invoked < window_end) {
          codes[op.code]++;
        }
      }
      std::printf(
          "FAULTS fault at %s: %s; healed after %s; launchers answered "
          "within %s; first claim %s after it began, %s after healing\n",
          Seconds(f.start).c_str(), f.name.c_str(),
          Seconds(f.healed - f.start).c_str(),
          Seconds(LongestWaitAfter(ops, f.start)).c_str(),
          Seconds(FirstClaimAfter(ops, f.start)).c_str(),
          Seconds(FirstClaimAfter(ops, f.healed)).c_str());
      std::printf("FAULTS   claims from then until the next fault: %s\n",
                  Counts(codes).c_str());
    }
    std::vector<std::string> stale;
    for (int r = 0; r < kReplicas; ++r) {
      stale.push_back(
          absl::StrCat("replica ", r, " ", Seconds(stale_after_[r])));
    }
    std::printf(
        "FAULTS stale (until quorum came back) during quorum loss "
        "after: %s (bound %s)\n",
        absl::StrJoin(stale, ", ").c_str(), Seconds(kStaleBound).c_str());
    std::vector<std::string> holders;
    for (const auto& [device, most] : check.max_holders) {
      holders.push_back(
          absl::StrCat(device, " ", most, "/", capacity_[device]));
    }
    std::vector<std::string> fleet;
    for (int r = 0; r < kReplicas; ++r) {
      fleet.push_back(absl::StrCat("replica ", r, " ", fewest_gpus_[r]));
    }
    std::printf(
        "FAULTS fewest GPUs listed while the etcd leader was paused: %s "
        "(of %d)\n",
        absl::StrJoin(fleet, ", ").c_str(), kNodes * kGpusPerNode);
    std::vector<std::string> others;
    for (int r = 0; r < kReplicas; ++r) {
      if (r == kPartitioned) continue;
      others.push_back(
          absl::StrCat("replica ", r, " ", partition_fewest_gpus_[r]));
    }
    std::printf(
        "FAULTS partition of replica %d: stale in Explain after %s, "
        "ctxsel.store NOT_SERVING after %s, ctxsel.v1.Placement NOT_SERVING "
        "after %s (bound %s); Pings unanswered: %d of %d; fewest GPUs the "
        "others listed: %s (of %d)\n",
        kPartitioned, Seconds(partition_explain_).c_str(),
        Seconds(partition_store_).c_str(),
        Seconds(partition_placement_).c_str(), Seconds(kStaleBound).c_str(),
        partition_pings_failed_, partition_pings_,
        absl::StrJoin(others, ", ").c_str(), kNodes * kGpusPerNode);
    std::vector<std::string> paused_listed, cut_listed;
    for (int r = 0; r < kReplicas; ++r) {
      if (r != 1) {
        paused_listed.push_back(
            absl::StrCat("replica ", r, " ", Seconds(pause_listed_since_[r])));
      }
      if (r != kPartitioned) {
        cut_listed.push_back(absl::StrCat("replica ", r, " ",
                                          Seconds(partition_listed_since_[r])));
      }
    }
    std::printf(
        "FAULTS agents moved: every GPU listed at every look after the "
        "pause of replica 1 from %s (bound %s), after the partition from "
        "%s (bound %s)\n",
        absl::StrJoin(paused_listed, ", ").c_str(),
        Seconds(kFailoverBound).c_str(),
        absl::StrJoin(cut_listed, ", ").c_str(),
        Seconds(kAgentCutOffBound).c_str());
    std::printf("FAULTS most certain holders at once / capacity: %s\n",
                absl::StrJoin(holders, ", ").c_str());
    std::printf(
        "FAULTS every replica serving %s after the last fault healed "
        "(bound %s); all %d places claimed again %s after the last "
        "unreleased claim expired\n",
        Seconds(serving).c_str(), Seconds(kServingBound).c_str(), kPlaces,
        Seconds(reclaim).c_str());
    std::printf("FAULTS violations: %zu\n", check.violations.size());
    for (const std::string& v : check.violations) {
      std::printf("FAULTS violation: %s\n", v.c_str());
    }
  }

  // "OK 12, UNAVAILABLE 3".
  static std::string Counts(const std::map<absl::StatusCode, int>& codes) {
    std::vector<std::string> parts;
    for (const auto& [code, n] : codes) {
      parts.push_back(absl::StrCat(absl::StatusCodeToString(code), " ", n));
    }
    return absl::StrJoin(parts, ", ");
  }

  static std::string Seconds(absl::Duration d) {
    if (d == absl::InfiniteDuration()) return "never";
    return absl::StrFormat("%.2fs", absl::ToDoubleSeconds(d));
  }

  std::string dir_;
  RunClock clock_;
  History history_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::vector<std::unique_ptr<ServerProcess>> replicas_;
  std::vector<std::string> addresses_;  // fixed: restarts keep the port
  std::vector<std::unique_ptr<Subprocess>> agents_;
  std::map<std::string, int> capacity_;
  std::unique_ptr<Workload> workload_;
  std::vector<Fault> faults_;
  std::vector<absl::Duration> stale_after_;
  std::vector<int> fewest_gpus_;  // while the etcd leader was paused
  // The partition's figures (WatchPartition).
  std::vector<std::unique_ptr<TcpProxy>> proxies_;  // one per member
  absl::Duration partition_explain_;
  absl::Duration partition_store_;
  absl::Duration partition_placement_;
  std::vector<int> partition_fewest_gpus_;
  // From when on each other replica listed every GPU at every look
  // (WatchListed, WatchPartition).
  std::vector<absl::Duration> pause_listed_since_;
  std::vector<absl::Duration> partition_listed_since_;
  int partition_pings_ = 0;
  int partition_pings_failed_ = 0;
  Mono stopped_;  // when the launchers stopped
};

TEST_F(FaultsE2E, ClaimsKeepTheirPromiseUnderFaults) {
  const Mono began = clock_.Now();
  workload_ = std::make_unique<Workload>(Options(), clock_, history_);
  workload_->Start();
  RunFaults();
  ASSERT_FALSE(HasFatalFailure());
  // The launchers and the writer stop with the last fault healed: a
  // replica must serve again by itself, not because a write succeeded.
  workload_->Stop();
  stopped_ = clock_.Now();
  const absl::Duration serving = WaitForAllServing(faults_.back().healed);

  // Every claim made so far ends (2-4 s claims, renewals up to 3 s).
  auto claims = client::CtxselClient::Connect(addresses_[0]);
  const Mono quiet = clock_.Now();
  for (;;) {
    auto listed = claims->ListClaims("");
    if (listed.ok() && listed->empty()) break;
    ASSERT_LT(clock_.Now() - quiet, absl::Seconds(15)) << "claims never ended";
    Sleep(absl::Milliseconds(100));
  }
  for (int r = 0; r < kReplicas; ++r) WaitUntilReady(r);
  const absl::Duration reclaim = ReclaimAfterExpiry();
  const Registrations registrations = workload_->registrations();
  CheckRegistrations(registrations);

  const std::vector<Operation> ops = history_.operations();
  const ClaimCheck check = CheckClaims(ops, capacity_, kTolerance);

  PrintSummary(ops, check, registrations, stopped_ - began, serving, reclaim);

  EXPECT_THAT(check.violations, IsEmpty());
  EXPECT_LE(serving, kServingBound);
  for (int r = 0; r < kReplicas; ++r) {
    EXPECT_LE(stale_after_[r], kStaleBound)
        << "replica " << r << " did not say it was stale without quorum";
  }
  for (const Fault& f : faults_) {
    if (f.replica_fault) {
      EXPECT_LE(LongestWaitAfter(ops, f.start), kFailoverBound) << f.name;
    }
    if (absl::StartsWith(f.name, "quorum loss")) {
      EXPECT_LE(FirstClaimAfter(ops, f.healed), kClaimAfterQuorumBound)
          << "no claim succeeded after quorum came back";
    }
  }
  for (int r = 0; r < kReplicas; ++r) {
    EXPECT_EQ(fewest_gpus_[r], kNodes * kGpusPerNode)
        << "replica " << r << " lost GPUs while the etcd leader was paused";
  }
  EXPECT_LE(partition_explain_, kStaleBound)
      << "the partitioned replica's Explain did not say stale";
  EXPECT_LE(partition_store_, kStaleBound)
      << "the partitioned replica's ctxsel.store health stayed SERVING";
  EXPECT_LE(partition_placement_, kStaleBound)
      << "the partitioned replica's ctxsel.v1.Placement stayed SERVING";
  EXPECT_EQ(partition_pings_failed_, 0)
      << "the partitioned replica left Pings unanswered";
  for (int r = 0; r < kReplicas; ++r) {
    EXPECT_LE(pause_listed_since_[r], kFailoverBound)
        << "replica " << r << " lost the paused replica's agents' GPUs";
    EXPECT_LE(partition_listed_since_[r], kAgentCutOffBound)
        << "replica " << r << " lost the partitioned replica's agents' GPUs";
  }
}

}  // namespace
}  // namespace ctxsel::testing
