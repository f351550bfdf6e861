// The claim promise under faults (issue 22, item 6), in the manner of
// etcd's functional tester and Jepsen: a real 3-member etcd, three real
// ctxsel-server replicas on it, two real agents reporting simulated GPUs
// (some shared: claim_capacity 2), a registered kernel, and concurrent
// launchers that claim, renew, release and abandon claims through the C++
// client, failing over across the replicas, while a schedule of faults
// runs: kill -9 of a replica, SIGSTOP of a replica, kill -9 of the etcd
// leader, quorum loss (two members killed), SIGSTOP of the etcd leader.
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
// saying so until quorum is back.
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
    for (int i = 0; i < kReplicas; ++i) {
      auto server = ServerProcess::Start(ReplicaFlags());
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

  std::vector<std::string> ReplicaFlags() {
    std::vector<std::string> flags = etcd_->ServerFlags();
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
    auto server = ServerProcess::Start(ReplicaFlags(), replicas_[r]->port());
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
      Fault f = Begin("SIGSTOP replica 1 for 5s", true);
      replicas_[1]->process().Signal(SIGSTOP);
      Sleep(absl::Seconds(5));
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
      Fault f =
          Begin(absl::StrCat("SIGSTOP etcd leader m", *leader, " for 4s"));
      etcd_->Pause(*leader);
      Sleep(absl::Seconds(4));
      etcd_->Resume(*leader);
      f.healed = clock_.Now();
      faults_.push_back(f);
      ASSERT_TRUE(etcd_->WaitForLeader(std::chrono::seconds(20)).ok());
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
        if ((explained.ok() && explained->stale()) || store == false) {
          if (stale_after_[r] == absl::InfiniteDuration()) {
            stale_after_[r] = looked - since;
          }
        } else {
          stale_after_[r] = absl::InfiniteDuration();
        }
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
  }
}

}  // namespace
}  // namespace ctxsel::testing
