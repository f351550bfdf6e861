#include "agent/backoff.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/random/random.h"

namespace ctxsel::agent {

Backoff::Backoff(Options options, std::function<double()> uniform01)
    : options_(options),
      uniform01_(std::move(uniform01)),
      current_(options.initial) {
  if (!uniform01_) {
    auto gen = std::make_shared<absl::BitGen>();
    uniform01_ = [gen] { return absl::Uniform(*gen, 0.0, 1.0); };
  }
}

absl::Duration Backoff::Next() {
  absl::Duration ceiling = std::min(current_, options_.max);
  current_ = std::min(current_ * 2, options_.max);
  return ceiling / 2 + ceiling / 2 * uniform01_();
}

}  // namespace ctxsel::agent
