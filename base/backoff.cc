#include "base/backoff.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/random/random.h"

namespace ctxsel {

Backoff::Backoff(Options options, std::function<double()> uniform01)
    : options_(options),
      uniform01_(std::move(uniform01)),
      current_(std::min(options.initial, options.max)) {
  if (!uniform01_) {
    auto gen = std::make_shared<absl::BitGen>();
    uniform01_ = [gen] { return absl::Uniform(*gen, 0.0, 1.0); };
  }
}

absl::Duration Backoff::Next() {
  const absl::Duration ceiling = std::min(current_, options_.max);
  current_ = std::min(current_ * 2, options_.max);
  const double u = std::clamp(uniform01_(), 0.0, 1.0);
  return ceiling / 2 + ceiling / 2 * u;
}

bool Backoff::Wait(Clock& clock, absl::Time deadline) {
  const absl::Time now = clock.Now();
  if (now >= deadline) return false;
  return clock.SleepUntil(std::min(now + Next(), deadline));
}

}  // namespace ctxsel
