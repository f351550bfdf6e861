#include "server/access/refusal_log.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/model/log_text.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {

RefusalLog::RefusalLog(RefusalLogOptions options)
    : options_(std::move(options)) {}

void RefusalLog::Note(absl::string_view peer, absl::string_view method,
                      const absl::Status& why) {
  int64_t unlogged = 0;
  {
    const absl::Time now = options_.now();
    absl::MutexLock lock(&mu_);
    if (now - last_line_ < options_.interval) {
      ++unlogged_;
      return;
    }
    last_line_ = now;
    unlogged = std::exchange(unlogged_, 0);
  }
  std::string line = absl::StrCat("auth: refused ", LogSafe(method), " from ",
                                  LogSafe(peer), ": ", LogSafe(why.ToString()));
  if (unlogged > 0) {
    absl::StrAppend(&line, "; ", unlogged,
                    " more refused since the previous line");
  }
  if (options_.write) {
    options_.write(line);
  } else {
    spdlog::warn("{}", line);
  }
}

}  // namespace ctxsel::server
