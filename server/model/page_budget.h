// page_budget.h: the one rule for how full a listing page may get, shared by
// variant, node and device listings. Besides the page size (a count), a page
// stops before its encoded items exceed a byte budget, so a reply never
// passes the server's message limit — gRPC would fail such a reply only
// after the work was done. A page always carries at least one item; an item
// too large for a page on its own is an error naming it.
//
//   PageBudget<Variant> budget(reply_bytes, [](const Variant& v) {
//     return EncodedBytes(v);
//   });
//   for (const Variant& v : ...) {
//     switch (budget.Take(v)) {
//       case PageFit::kFits: page.push_back(v); break;
//       case PageFit::kFull: return page;  // with a token after the last
//       case PageFit::kTooLarge:
//         return TooLargeForAPage(absl::StrCat("variant ", v.name), budget);
//     }
//   }
#ifndef CTXSEL_SERVER_MODEL_PAGE_BUDGET_H_
#define CTXSEL_SERVER_MODEL_PAGE_BUDGET_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ctxsel::server {

enum class PageFit {
  kFits,      // counted; add it to the page
  kFull,      // the page is full: end it before this item
  kTooLarge,  // the page's first item alone is over the budget
};

template <typename T>
class PageBudget {
 public:
  // No byte limit: every item fits.
  PageBudget() = default;
  // Items, as `bytes_of` counts them, may add up to `max_bytes` per page.
  PageBudget(size_t max_bytes, std::function<size_t(const T&)> bytes_of)
      : max_bytes_(max_bytes), bytes_of_(std::move(bytes_of)) {}

  PageFit Take(const T& item) {
    if (!bytes_of_) return PageFit::kFits;
    const size_t bytes = bytes_of_(item);
    if (bytes <= max_bytes_ - used_) {
      used_ += bytes;
      ++taken_;
      return PageFit::kFits;
    }
    return taken_ == 0 ? PageFit::kTooLarge : PageFit::kFull;
  }

  size_t max_bytes() const { return max_bytes_; }

 private:
  size_t max_bytes_ = std::numeric_limits<size_t>::max();
  std::function<size_t(const T&)> bytes_of_;
  size_t used_ = 0;
  size_t taken_ = 0;
};

// The bytes a listing reply's items may take when a message may be
// `max_message_bytes`: 64 KiB (at most half) are left for the rest of the
// reply (page token, revision) and framing.
inline size_t PageBytes(int max_message_bytes) {
  const size_t max = max_message_bytes > 0 ? max_message_bytes : 0;
  const size_t headroom = std::min<size_t>(64 << 10, max / 2);
  return max - headroom;
}

// ResourceExhaustedError "<item> is too large for one reply (over N
// bytes)".
template <typename T>
absl::Status TooLargeForAPage(absl::string_view item,
                              const PageBudget<T>& budget) {
  return absl::ResourceExhaustedError(
      absl::StrCat(item, " is too large for one reply (over ",
                   budget.max_bytes(), " bytes)"));
}

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_PAGE_BUDGET_H_
