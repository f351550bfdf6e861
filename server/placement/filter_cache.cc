#include "server/placement/filter_cache.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::server::placement {

absl::StatusOr<selector::Selector> FilterCache::Get(
    absl::string_view text) const {
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = parsed_.find(text);
    if (it != parsed_.end()) return it->second;
  }
  absl::StatusOr<selector::Selector> parsed = selector::Selector::Parse(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_filter: ", parsed.status().message()));
  }
  absl::MutexLock lock(&mu_);
  if (parsed_.size() < capacity_) parsed_.emplace(std::string(text), *parsed);
  return parsed;
}

size_t FilterCache::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return parsed_.size();
}

}  // namespace ctxsel::server::placement
