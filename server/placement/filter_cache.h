// filter_cache.h: parsed device filters, shared between requests.
//
// Jobs of one launcher repeat the same `device_filter` text; parsing it
// costs more than the rest of a Select. FilterCache keeps up to `capacity`
// parsed filters (further ones are parsed per request, never evicting);
// errors are not cached.
//
//   FilterCache cache(1024);
//   absl::StatusOr<selector::Selector> f = cache.Get("device={kind(gpu)}");
#ifndef CTXSEL_SERVER_PLACEMENT_FILTER_CACHE_H_
#define CTXSEL_SERVER_PLACEMENT_FILTER_CACHE_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "selector/selector.h"

namespace ctxsel::server::placement {

class FilterCache {
 public:
  explicit FilterCache(size_t capacity) : capacity_(capacity) {}

  // The parsed selector; InvalidArgumentError "device_filter: L:C: …".
  absl::StatusOr<selector::Selector> Get(absl::string_view text) const
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, selector::Selector> parsed_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_FILTER_CACHE_H_
