// refusal_log.h: refused calls in the server log — no or unknown
// credentials, a role that may not call the method, a principal over its
// stream limit — with the caller's address, the method and the reason, at
// most one line per interval: a flood of refused calls shows, without
// flooding the log. A line counts the refusals it stood for. The reason
// never holds a token (Authorizer's messages do not), and every text is
// escaped (LogSafe): a peer or a principal cannot forge a line.
//
//   RefusalLog refusals;
//   refusals.Note(context.peer(), "Placement/Select", status);
//   // auth: refused Placement/Select from ipv4:10.0.0.9:50312:
//   //   UNAUTHENTICATED: authorization: unknown token ...; 41 more refused
//   //   since the previous line
#ifndef CTXSEL_SERVER_ACCESS_REFUSAL_LOG_H_
#define CTXSEL_SERVER_ACCESS_REFUSAL_LOG_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ctxsel::server {

struct RefusalLogOptions {
  absl::Duration interval = absl::Seconds(1);
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Null: spdlog's default logger, at warning level.
  std::function<void(const std::string&)> write;
};

class RefusalLog {
 public:
  explicit RefusalLog(RefusalLogOptions options = {});

  // A call of `method` from `peer` was refused with `why`: logged unless a
  // line was written less than an interval ago, then counted for the next.
  void Note(absl::string_view peer, absl::string_view method,
            const absl::Status& why);

 private:
  const RefusalLogOptions options_;
  absl::Mutex mu_;
  absl::Time last_line_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t unlogged_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_ACCESS_REFUSAL_LOG_H_
