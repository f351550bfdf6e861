// fault_workload.h: the load of a fault-injection run (faults_e2e_test.cc):
// launchers that claim, renew, release and abandon claims through the C++
// client, and a writer that registers variants, each failing over across
// the replicas and recording what it did: claim operations in a History
// (claim_history.h), registrations in Registrations.
//
//   RunClock clock;
//   History history;
//   Workload workload(options, clock, history);
//   workload.Start();
//   ...  // faults
//   workload.Stop();
//   CheckClaims(history.operations(), capacity, absl::Milliseconds(5));
//   Registrations made = workload.registrations();
#ifndef CTXSEL_TESTS_ETCD_FAULT_WORKLOAD_H_
#define CTXSEL_TESTS_ETCD_FAULT_WORKLOAD_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "tests/etcd/claim_history.h"

namespace ctxsel::testing {

struct WorkloadOptions {
  std::vector<std::string> replicas;  // host:port of each
  int launchers = 6;
  // What the launchers select: Job.kernel and Job.device_filter.
  std::string kernel;
  std::string device_filter;
  // The kernel the writer registers variants of ("e0", "e1", ...).
  std::string journal;
  // A call with no answer within this goes to the next replica.
  std::chrono::milliseconds call_timeout{3000};
};

// UNAVAILABLE and DEADLINE_EXCEEDED: the call had no answer (from a
// server, or from etcd behind it), so it may or may not have been applied.
bool Unanswered(absl::StatusCode code);

// One launcher's claim calls. Each goes to the launcher's replica and on
// to the next ones while it is Unanswered, once around; the replica that
// answered stays the launcher's. Every attempt is recorded in the history
// as `process`'s.
class ClaimingClient {
 public:
  ClaimingClient(const WorkloadOptions& options, int process,
                 const RunClock& clock, History& history);

  struct Held {
    std::string id;
    Mono expiry;  // as answered
  };
  // A Select of the options' job with a claim for `duration`; nullopt when
  // it failed.
  std::optional<Held> Claim(absl::Duration duration);
  // The claim's new expiry; nullopt when the renewal failed.
  std::optional<Mono> Renew(const std::string& id, absl::Duration duration);
  void Release(const std::string& id);

  void set_replica(int replica) { replica_ = replica % replicas(); }

 private:
  int replicas() const { return static_cast<int>(clients_.size()); }
  // Records every attempt (`fill` adds what an OK answer says); the last
  // attempt's status.
  template <typename Result>
  absl::Status WithFailover(
      Operation base,
      const std::function<absl::StatusOr<Result>(client::CtxselClient&)>& call,
      const std::function<void(const Result&, Operation&)>& fill);

  const WorkloadOptions options_;
  const int process_;
  const RunClock& clock_;
  History& history_;
  std::vector<std::unique_ptr<client::CtxselClient>> clients_;
  int replica_ = 0;
};

// A registration the writer made: acknowledged (OK), or found stored after
// failure answers (ALREADY_EXISTS on a retry).
struct Registration {
  std::string name;
  int64_t revision = 0;  // when acknowledged
  Mono completed;
};

struct Registrations {
  std::vector<Registration> acknowledged;  // in the order made
  std::vector<Registration> found;
  // Names stored although every failure answered for them said nothing
  // was (a failure other than Unanswered or UNKNOWN): false answers.
  std::vector<std::string> false_refusals;
  std::map<absl::StatusCode, int> codes;  // every attempt's answer
};

class Workload {
 public:
  Workload(WorkloadOptions options, const RunClock& clock, History& history);
  ~Workload() { Stop(); }

  // Starts options.launchers launchers (launcher i first on replica i) and
  // the writer, each on a thread.
  void Start();
  // Stops them (calls in flight finish) and joins them.
  void Stop();
  Registrations registrations() const;

 private:
  void Launcher(int index);
  void Writer();
  // Sleeps `d`, or less when stopping.
  void Nap(absl::Duration d);

  const WorkloadOptions options_;
  const RunClock& clock_;
  History& history_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  mutable absl::Mutex mu_;
  Registrations registrations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_ETCD_FAULT_WORKLOAD_H_
