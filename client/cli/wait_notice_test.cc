#include "client/cli/wait_notice.h"

#include <cstdio>
#include <string>

#include "base/proto_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using ::testing::HasSubstr;

v1::SelectRequest Request() {
  v1::SelectRequest r;
  r.mutable_job()->set_kernel("saxpy");
  r.mutable_job()->set_count(2);
  *r.mutable_claim()->mutable_duration() = ToProtoDuration(absl::Minutes(5));
  return r;
}

TEST(WaitNoticeTest, SaysWhatItWaitsForAndUntilWhen) {
  const v1::SelectRequest request = Request();
  const absl::Time start = absl::FromUnixSeconds(1800000000);
  WaitNotice notice(request, start + absl::Minutes(1));
  const std::string first = notice.Text(
      absl::ResourceExhaustedError("all 8 fitting devices are claimed"), start,
      /*first=*/true);
  // Wrapped at 120 columns.
  EXPECT_EQ(first,
            "ctxsel-cli: waiting until 2027-01-15T08:01:00Z (1m left) for 2 "
            "devices for kernel 'saxpy' (claim 5m): all 8 fitting\n"
            "    devices are claimed");
  EXPECT_THAT(notice.Text(absl::ResourceExhaustedError("claimed"),
                          start + absl::Seconds(15), /*first=*/false),
              HasSubstr("still waiting (45s left) for 2 devices"));
}

TEST(WaitNoticeTest, OnceThenAtMostEveryTenSeconds) {
  const v1::SelectRequest request = Request();
  const absl::Time start = absl::FromUnixSeconds(1800000000);
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  WaitNotice notice(request, start + absl::Minutes(1), out);
  const absl::Status claimed = absl::ResourceExhaustedError("claimed");
  // Retries every 100ms..2s for 25 s: the first line, then one per 10 s.
  for (absl::Duration t; t < absl::Seconds(25); t += absl::Milliseconds(500)) {
    notice.Waiting(claimed, start + t);
  }
  std::rewind(out);
  int lines = 0;
  for (int c; (c = std::fgetc(out)) != EOF;) lines += c == '\n';
  std::fclose(out);
  EXPECT_EQ(lines, 3);  // at 0 s, 10 s and 20 s
}

}  // namespace
}  // namespace ctxsel::cli
