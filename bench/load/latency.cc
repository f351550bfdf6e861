#include "bench/load/latency.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace ctxsel::load {
namespace {

// Nearest rank: the smallest value with at least q of the values at or
// below it.
absl::Duration Percentile(const std::vector<absl::Duration>& sorted, double q) {
  const size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

int64_t Micros(absl::Duration d) { return absl::ToInt64Microseconds(d); }

}  // namespace

void LatencyRecorder::Add(absl::Duration latency, bool ok) {
  if (ok) {
    latencies_.push_back(latency);
  } else {
    ++errors_;
  }
}

LatencySummary Summarize(const std::vector<const LatencyRecorder*>& recorders,
                         absl::Duration elapsed) {
  LatencySummary summary;
  std::vector<absl::Duration> all;
  for (const LatencyRecorder* r : recorders) {
    all.insert(all.end(), r->latencies().begin(), r->latencies().end());
    summary.errors += r->errors();
  }
  summary.calls = static_cast<int64_t>(all.size());
  if (elapsed > absl::ZeroDuration()) {
    summary.per_second = summary.calls / absl::ToDoubleSeconds(elapsed);
  }
  if (all.empty()) return summary;
  std::sort(all.begin(), all.end());
  summary.p50 = Percentile(all, 0.50);
  summary.p90 = Percentile(all, 0.90);
  summary.p99 = Percentile(all, 0.99);
  summary.max = all.back();
  return summary;
}

std::string FormatSummary(const LatencySummary& s) {
  return absl::StrFormat(
      "%d calls (%d errors), %.1f/s, p50 %dus p90 %dus p99 %dus max %dus",
      s.calls, s.errors, s.per_second, Micros(s.p50), Micros(s.p90),
      Micros(s.p99), Micros(s.max));
}

}  // namespace ctxsel::load
