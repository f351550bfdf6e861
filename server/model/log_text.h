// log_text.h: the one rule for putting client-chosen text (kernel, node and
// device names, selectors, peers, error messages that quote them) into the
// server's log. The text is escaped so that it cannot start a new line or
// carry terminal control sequences — a client must not be able to forge a
// log line — and cut to a bounded length.
//
//   spdlog::info("node {} added", LogSafe(node_id));
//   // "node a\n[info] forged" logs as: node a\n[info] forged  (one line)
#ifndef CTXSEL_SERVER_MODEL_LOG_TEXT_H_
#define CTXSEL_SERVER_MODEL_LOG_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ctxsel::server {

// Longest text LogSafe keeps, in input bytes; longer text ends in "...".
inline constexpr size_t kMaxLogTextBytes = 1024;

// `text` with control characters (bytes below 0x20 and 0x7f) and backslashes
// written as C escapes (\n, \t, \x1b, \\); other bytes, UTF-8 included, are
// kept. At most kMaxLogTextBytes of `text` are kept, then "...".
std::string LogSafe(absl::string_view text);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_LOG_TEXT_H_
