// principal_limits.h: per-principal rate and stream limits, so that one
// agent, launcher or admin cannot crowd out the rest (docs/security.md,
// "Per-principal limits"). A breach is RESOURCE_EXHAUSTED for that principal
// only; the others' budgets are untouched.
//
//   PrincipalLimits limits(PrincipalLimitOptions{});
//   if (absl::Status s = limits.Take(Budget::kReport, node); !s.ok()) ...
//   absl::StatusOr<PrincipalLimits::Stream> stream = limits.OpenStream(name);
//   // the stream counts until `stream` is destroyed
#ifndef CTXSEL_SERVER_ACCESS_PRINCIPAL_LIMITS_H_
#define CTXSEL_SERVER_ACCESS_PRINCIPAL_LIMITS_H_

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ctxsel::server {

// What a rate limit counts; each has its own bucket per principal.
enum class Budget { kReport, kHeartbeat, kRegistration };

struct PrincipalLimitOptions {
  // Sustained rates; a principal may burst to one period's worth at once
  // (one second of heartbeats, one minute of reports or registrations).
  // Zero or less: no limit.
  double reports_per_minute = 60;
  double heartbeats_per_second = 10;
  double registrations_per_minute = 600;
  // Heartbeat and watch streams one principal may hold open at once.
  int max_streams = 32;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class PrincipalLimits {
 public:
  explicit PrincipalLimits(PrincipalLimitOptions options);

  // Takes one unit of `budget` for `principal` (a node id for reports and
  // heartbeats, a principal name for registrations). ResourceExhaustedError
  // naming the principal and the limit when its bucket is empty.
  absl::Status Take(Budget budget, const std::string& principal);

  // An open stream, counted against its principal until destroyed.
  class Stream {
   public:
    Stream(Stream&& other) noexcept
        : limits_(std::exchange(other.limits_, nullptr)),
          principal_(std::move(other.principal_)) {}
    Stream& operator=(Stream&&) = delete;
    ~Stream();

   private:
    friend class PrincipalLimits;
    Stream(PrincipalLimits* limits, std::string principal)
        : limits_(limits), principal_(std::move(principal)) {}
    PrincipalLimits* limits_;
    std::string principal_;
  };
  // ResourceExhaustedError when `principal` already holds max_streams.
  absl::StatusOr<Stream> OpenStream(const std::string& principal);

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time refilled;
  };
  void CloseStream(const std::string& principal);

  const PrincipalLimitOptions options_;
  absl::Mutex mu_;
  std::map<std::pair<Budget, std::string>, Bucket> buckets_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_ACCESS_PRINCIPAL_LIMITS_H_
