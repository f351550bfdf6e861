#include "selector/suggest.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::selector::internal {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  auto substitution = [](char x, char y) -> size_t {
    x = absl::ascii_tolower(x);
    y = absl::ascii_tolower(y);
    if (x == y) return 0;
    return absl::ascii_isdigit(x) == absl::ascii_isdigit(y) ? 2 : 3;
  };
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = 2 * j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = 2 * i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t next =
          std::min({row[j] + 2, row[j - 1] + 2,
                    diagonal + substitution(a[i - 1], b[j - 1])});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::optional<absl::string_view> NearestName(
    absl::string_view name, const std::vector<absl::string_view>& candidates) {
  const size_t limit = 2 * std::max<size_t>(2, name.size() / 3);
  std::optional<absl::string_view> best;
  size_t best_distance = limit + 1;
  for (absl::string_view candidate : candidates) {
    const size_t d = EditDistance(name, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::string DidYouMean(absl::string_view name,
                       const std::vector<absl::string_view>& candidates) {
  std::optional<absl::string_view> near = NearestName(name, candidates);
  return near ? absl::StrCat("; did you mean '", *near, "'?") : "";
}

}  // namespace ctxsel::selector::internal
