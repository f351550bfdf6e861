// latency.h: per-call latencies of one load phase and their summary.
//
//   LatencyRecorder recorder;   // one per client thread
//   recorder.Add(absl::Microseconds(120), /*ok=*/true);
//   LatencySummary s = Summarize({&recorder}, absl::Seconds(10));
//   // s.p50, s.p99, s.per_second ...
#ifndef CTXSEL_BENCH_LOAD_LATENCY_H_
#define CTXSEL_BENCH_LOAD_LATENCY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace ctxsel::load {

// Not thread-safe: one per thread, merged by Summarize.
class LatencyRecorder {
 public:
  void Add(absl::Duration latency, bool ok);
  const std::vector<absl::Duration>& latencies() const { return latencies_; }
  int64_t errors() const { return errors_; }

 private:
  std::vector<absl::Duration> latencies_;  // of successful calls
  int64_t errors_ = 0;
};

struct LatencySummary {
  int64_t calls = 0;  // successful
  int64_t errors = 0;
  double per_second = 0;  // successful calls / elapsed
  absl::Duration p50, p90, p99, max;
};

// Merges the recorders of one phase that lasted `elapsed`. Percentiles are
// nearest-rank; all zero when there were no successful calls.
LatencySummary Summarize(const std::vector<const LatencyRecorder*>& recorders,
                         absl::Duration elapsed);

// "12345 calls (0 errors), 1234.5/s, p50 110us p90 ... max ...".
std::string FormatSummary(const LatencySummary& summary);

}  // namespace ctxsel::load

#endif  // CTXSEL_BENCH_LOAD_LATENCY_H_
