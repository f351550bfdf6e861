#include "server/model/page_token.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_details.h"

namespace ctxsel::server {
namespace {

// Bumped if the layout changes, so old tokens fail as foreign ones.
constexpr absl::string_view kVersion = "ctxsel-page-1";
constexpr char kSeparator = '\0';

// FNV-1a: stable across processes and restarts, unlike absl::Hash, so a
// token stays valid for a restarted server.
std::string Fingerprint(absl::string_view filters) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : filters) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return absl::StrCat(absl::Hex(hash, absl::kZeroPad16));
}

absl::Status BadToken(absl::string_view listing, absl::string_view reason,
                      absl::string_view description) {
  return WithErrorInfo(FieldViolation("page_token", description), reason,
                       {{"listing", std::string(listing)}});
}

}  // namespace

std::string PageFilters(
    const std::vector<std::pair<absl::string_view, absl::string_view>>&
        fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    absl::StrAppend(&out, name, "=", value, std::string(1, kSeparator));
  }
  return out;
}

std::string EncodePageToken(absl::string_view listing,
                            absl::string_view filters,
                            const std::vector<std::string>& position) {
  std::vector<std::string> parts = {std::string(kVersion), std::string(listing),
                                    Fingerprint(filters)};
  parts.insert(parts.end(), position.begin(), position.end());
  return absl::WebSafeBase64Escape(
      absl::StrJoin(parts, std::string(1, kSeparator)));
}

absl::StatusOr<std::vector<std::string>> DecodePageToken(
    absl::string_view token, absl::string_view listing,
    absl::string_view filters, size_t position_parts) {
  const std::string foreign =
      absl::StrCat("not a token from a previous ", listing, " answer");
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) {
    return BadToken(listing, kReasonPageTokenInvalid, foreign);
  }
  std::vector<std::string> parts =
      absl::StrSplit(raw, absl::ByChar(kSeparator));
  if (parts.size() != 3 + position_parts || parts[0] != kVersion ||
      parts[1] != listing) {
    return BadToken(listing, kReasonPageTokenInvalid, foreign);
  }
  if (parts[2] != Fingerprint(filters)) {
    return BadToken(listing, kReasonPageTokenFiltersChanged,
                    absl::StrCat("issued for other filters; send the first "
                                 "page's filters with it, or no token"));
  }
  return std::vector<std::string>(parts.begin() + 3, parts.end());
}

absl::StatusOr<size_t> PageSizeOf(int requested, int default_size,
                                  int max_size) {
  if (requested < 0) return FieldViolation("page_size", "negative");
  return static_cast<size_t>(requested == 0 ? default_size
                                            : std::min(requested, max_size));
}

}  // namespace ctxsel::server
