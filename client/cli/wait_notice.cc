#include "client/cli/wait_notice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/proto_time.h"
#include "client/cli/text_fit.h"

namespace ctxsel::cli {

std::string WaitNotice::Text(const absl::Status& why, absl::Time now,
                             bool first) const {
  const absl::Duration left = absl::Trunc(
      std::max(deadline_ - now, absl::ZeroDuration()), absl::Seconds(1));
  const int devices = std::max(request_.job().count(), 1);
  std::string text = absl::StrCat(
      "ctxsel-cli: ",
      first ? absl::StrCat("waiting until ",
                           absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", deadline_,
                                            absl::UTCTimeZone()),
                           " (", absl::FormatDuration(left), " left)")
            : absl::StrCat("still waiting (", absl::FormatDuration(left),
                           " left)"),
      " for ", devices, devices == 1 ? " device" : " devices", " for kernel '",
      request_.job().kernel(), "'");
  if (first && request_.has_claim()) {
    absl::StrAppend(
        &text, " (claim ",
        absl::FormatDuration(FromProtoDuration(request_.claim().duration())),
        ")");
  }
  absl::StrAppend(&text, ": ", why.message());
  return WrapText(text, kTableWidth);
}

void WaitNotice::Waiting(const absl::Status& why, absl::Time now) {
  const bool first = last_ == absl::InfinitePast();
  if (!first && now - last_ < kEvery) return;
  last_ = now;
  std::fprintf(out_, "%s\n", Text(why, now, first).c_str());
  std::fflush(out_);
}

}  // namespace ctxsel::cli
