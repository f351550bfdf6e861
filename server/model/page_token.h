// page_token.h: the one format of listing page tokens (ListVariants,
// ListNodes, ListDevices). A token names its listing, a fingerprint of the
// request's filters and the position of the last item served, made opaque
// (web-safe base64) so clients do not build them. Decoding checks all
// three: a token that is not one of ours, from another listing, or sent
// with other filters than the page it came from is INVALID_ARGUMENT naming
// `page_token` (with a BadRequest field violation), never an empty or
// wrong page. Page size may change between pages.
//
//   std::string token = EncodePageToken("ListDevices", filters, {node, "3"});
//   absl::StatusOr<std::vector<std::string>> position =
//       DecodePageToken(token, "ListDevices", filters, 2);
//
// and the one rule for a request's page_size:
//
//   CTXSEL_ASSIGN_OR_RETURN(size_t limit, PageSizeOf(request_size, 100, 1000));
#ifndef CTXSEL_SERVER_MODEL_PAGE_TOKEN_H_
#define CTXSEL_SERVER_MODEL_PAGE_TOKEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel::server {

// `filters`: the request's filter fields, each with its name
// (PageFilters({{"device_filter", text}, {"node", node}})).
std::string PageFilters(
    const std::vector<std::pair<absl::string_view, absl::string_view>>& fields);

std::string EncodePageToken(absl::string_view listing,
                            absl::string_view filters,
                            const std::vector<std::string>& position);

// The position of a token EncodePageToken made for the same listing and
// filters, with exactly `position_parts` parts.
absl::StatusOr<std::vector<std::string>> DecodePageToken(
    absl::string_view token, absl::string_view listing,
    absl::string_view filters, size_t position_parts);

// How many items a page may hold: `default_size` for 0, at most
// `max_size`; a negative `requested` is INVALID_ARGUMENT naming `page_size`.
absl::StatusOr<size_t> PageSizeOf(int requested, int default_size,
                                  int max_size);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_PAGE_TOKEN_H_
