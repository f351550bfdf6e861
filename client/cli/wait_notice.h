// wait_notice.h: what `select --wait` and `run --wait` say on stderr while
// every fitting device is claimed: what they wait for (the kernel, how many
// devices) and until when, once when the wait starts and then at most
// every WaitNotice::kEvery, so that a launcher's log shows a job waiting,
// not hanging.
//
//   WaitNotice notice(request, absl::Now() + wait);
//   while (...) {  // each retry
//     notice.Waiting(answer.status());
//   }
//   // ctxsel-cli: waiting until 2026-05-01T10:01:00Z (1m left) for 1 device
//   //   for kernel 'saxpy' (claim 5m): all 8 fitting devices are claimed
#ifndef CTXSEL_CLIENT_CLI_WAIT_NOTICE_H_
#define CTXSEL_CLIENT_CLI_WAIT_NOTICE_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::cli {

class WaitNotice {
 public:
  // The least time between two lines after the first.
  static constexpr absl::Duration kEvery = absl::Seconds(10);

  WaitNotice(const v1::SelectRequest& request, absl::Time deadline,
             std::FILE* out = stderr)
      : request_(request), deadline_(deadline), out_(out) {}

  // Called before each retry with the answer that made it wait: prints
  // Text() the first time, and again when kEvery has passed since the
  // last line.
  void Waiting(const absl::Status& why, absl::Time now = absl::Now());

  // The line (wrapped at kTableWidth, text_fit.h) Waiting prints at `now`;
  // `first` says "waiting until ...", later ones "still waiting ...".
  std::string Text(const absl::Status& why, absl::Time now, bool first) const;

 private:
  const v1::SelectRequest& request_;
  const absl::Time deadline_;
  std::FILE* const out_;
  absl::Time last_ = absl::InfinitePast();
};

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_WAIT_NOTICE_H_
