// suggest.h: "did you mean" for misspelt names, shared by every message that
// names a word from a closed vocabulary (constructs, requirements, SYCL
// architectures).
//
//   std::optional<absl::string_view> near =
//       NearestName("paralel", {"target", "parallel", "for"});  // "parallel"
#ifndef CTXSEL_SELECTOR_SUGGEST_H_
#define CTXSEL_SELECTOR_SUGGEST_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ctxsel::selector::internal {

// Edit distance in half-steps, ignoring ASCII case: inserting, deleting or
// replacing a character costs 2, but replacing a digit by a letter (or the
// reverse) costs 3, so "gfx90b" is nearer to "gfx90a" than to "gfx900".
size_t EditDistance(absl::string_view a, absl::string_view b);

// The candidate nearest to `name` by EditDistance (ties: the earlier one),
// if it is near enough to be a likely misspelling: at most two edits, or one
// edit in three characters of `name` for longer names.
std::optional<absl::string_view> NearestName(
    absl::string_view name, const std::vector<absl::string_view>& candidates);

// "; did you mean 'parallel'?" for NearestName's answer, else "".
std::string DidYouMean(absl::string_view name,
                       const std::vector<absl::string_view>& candidates);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_SUGGEST_H_
