#include "client/cli/text_fit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ctxsel::cli {
namespace {

// One line (no newline) wrapped; see WrapText.
void AppendWrapped(absl::string_view line, size_t width, size_t hang,
                   std::string& out) {
  if (line.size() <= width) {
    absl::StrAppend(&out, line);
    return;
  }
  const size_t indent = line.find_first_not_of(' ');
  // The continuation indent, kept small enough to leave room for words.
  const size_t next = std::min(indent + hang, width / 2);
  std::string current(line.substr(0, indent));
  bool empty = true;  // nothing but the indent on `current` yet
  auto flush = [&] {
    absl::StrAppend(&out, current, "\n");
    current.assign(next, ' ');
    empty = true;
  };
  // `text` after what `current` holds, or on a line of its own.
  auto fits = [&](absl::string_view text) {
    return current.size() + (empty ? 0 : 1) + text.size() <= width;
  };
  // Clauses ("a; b") stay whole where they can, so a message breaks between
  // its reasons, not inside one.
  for (absl::string_view clause :
       absl::StrSplit(line.substr(indent), absl::ByString("; "))) {
    std::string whole(clause);
    if (clause.end() != line.end()) whole += ';';
    if (!fits(whole) && !empty) flush();
    if (fits(whole)) {
      if (!empty) current += ' ';
      current += whole;
      empty = false;
      continue;
    }
    // A clause longer than a line: by words.
    for (absl::string_view word : absl::StrSplit(whole, ' ')) {
      if (!fits(word) && !empty) flush();
      // A word wider than the line (a long path) stays whole on a line of
      // its own: a file name cut in two is no use to an editor or a script.
      if (!empty) current += ' ';
      absl::StrAppend(&current, word);
      empty = false;
    }
  }
  absl::StrAppend(&out, current);
}

}  // namespace

std::string WrapText(absl::string_view text, size_t width, size_t hang) {
  std::string out;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!first) out += '\n';
    first = false;
    AppendWrapped(line, width, hang, out);
  }
  return out;
}

std::vector<size_t> FitColumns(std::vector<size_t> natural, size_t width) {
  if (natural.empty()) return natural;
  const size_t gaps = kColumnGap * (natural.size() - 1);
  auto total = [&](size_t cap) {
    size_t sum = gaps;
    for (size_t w : natural) sum += std::min(w, cap);
    return sum;
  };
  const size_t widest = *std::max_element(natural.begin(), natural.end());
  if (total(widest) <= width) return natural;
  // The largest cap on every column's width with which the row fits.
  size_t lo = kMinColumn, hi = widest;
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (total(mid) <= width) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  for (size_t& w : natural) w = std::min(w, lo);
  return natural;
}

std::string Ellipsized(absl::string_view cell, size_t width) {
  if (cell.size() <= width) return std::string(cell);
  if (width <= 3) return std::string(cell.substr(0, width));
  return absl::StrCat(cell.substr(0, width - 3), "...");
}

}  // namespace ctxsel::cli
