// claim_history.h: what concurrent launchers did with claims during a
// fault-injection run (tests/etcd/faults_e2e_test.cc), and a checker of the
// claim promise over it, in the manner of Jepsen: every operation is
// recorded with its invocation and completion times on one monotonic clock
// and its outcome, and the checker counts only what is certain.
//
// An acknowledged claim certainly holds its device from the completion of
// the Select that made it (or of an acknowledged renewal) until the expiry
// that answer returned, cut short by anything that may have ended or
// shortened it: a release invoked (whatever it answered: a failed one may
// have been applied), or a renewal that did not answer OK (it may have been
// applied, at any time after its invocation, with an expiry of at least its
// invocation plus its duration), or a later acknowledged renewal (from its
// invocation on, its own expiry may apply). Outcomes that are not certain
// (a claim whose Select timed out) add nothing, so the checker never reports
// a violation that did not happen; it may miss one.
//
//   History history;
//   history.Add(op);                       // from any thread
//   ClaimCheck check = CheckClaims(history.operations(), capacities,
//                                  absl::Milliseconds(5));
//   EXPECT_THAT(check.violations, IsEmpty());
#ifndef CTXSEL_TESTS_ETCD_CLAIM_HISTORY_H_
#define CTXSEL_TESTS_ETCD_CLAIM_HISTORY_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ctxsel::testing {

// A time on the run's monotonic clock, as the time since the run began.
using Mono = absl::Duration;

// The run's clock: monotonic, and able to place the servers' wall-clock
// times (a claim's expire_time) on it. The servers run on this machine, so
// they share its wall clock; a conversion is off by the wall clock's drift
// from the monotonic one since it was made (microseconds over a run).
class RunClock {
 public:
  RunClock() : start_(std::chrono::steady_clock::now()) {}
  Mono Now() const {
    return absl::FromChrono(std::chrono::steady_clock::now() - start_);
  }
  Mono FromWall(absl::Time wall) const {
    const absl::Time wall_now = absl::Now();
    return Now() + (wall - wall_now);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct Operation {
  enum class Kind { kClaim, kRenew, kRelease };
  Kind kind = Kind::kClaim;
  int process = 0;   // which launcher
  int replica = -1;  // which replica it was sent to
  Mono invoked;
  Mono completed;
  absl::StatusCode code = absl::StatusCode::kUnknown;
  std::string message;  // the error's
  // kRenew and kRelease: the claim; kClaim: the claim made, when OK.
  std::string claim_id;
  std::string device;  // kClaim, when OK
  // kClaim and kRenew: the duration asked for, and when OK the expiry
  // answered (Claim.expire_time on the run's clock).
  absl::Duration duration;
  Mono expiry;
};

std::string KindName(Operation::Kind kind);

// Operations added from any thread, in the order of their completion.
class History {
 public:
  void Add(Operation operation);
  std::vector<Operation> operations() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<Operation> operations_ ABSL_GUARDED_BY(mu_);
};

// A stretch of time a claim certainly held its device: [from, to).
struct Holding {
  std::string claim_id;
  std::string device;
  Mono from;
  Mono to;
};

// The certain holdings of every acknowledged claim in `operations`
// (several per claim only when a renewal came after a gap), each ended
// `tolerance` early: the slack for placing the servers' expiries on the
// run's clock.
std::vector<Holding> CertainHoldings(const std::vector<Operation>& operations,
                                     absl::Duration tolerance);

struct ClaimCheck {
  // Readable, one per violation: a device held by more certain claims than
  // its capacity; a claim a renewal or release answered NOT_FOUND for while
  // it certainly held its device; a claiming Select answered
  // INVALID_ARGUMENT.
  std::vector<std::string> violations;
  // Per device: the most claims that certainly held it at once.
  std::map<std::string, int> max_holders;
};

// Checks `operations` against `capacity` (device id -> claim_capacity, at
// least 1; a device missing from it counts 1).
ClaimCheck CheckClaims(const std::vector<Operation>& operations,
                       const std::map<std::string, int>& capacity,
                       absl::Duration tolerance);

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_ETCD_CLAIM_HISTORY_H_
