#include "server/access/refusal_log.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RefusalLogTest, OneLinePerIntervalCountingTheRest) {
  absl::Time now = absl::FromUnixSeconds(1000);
  std::vector<std::string> lines;
  RefusalLog log({.interval = absl::Seconds(1),
                  .now = [&] { return now; },
                  .write = [&](const std::string& l) { lines.push_back(l); }});
  const absl::Status unknown =
      absl::UnauthenticatedError("authorization: unknown token");
  for (int i = 0; i < 100; ++i) {
    log.Note("ipv4:10.0.0.9:50312", "Placement/Select", unknown);
    now += absl::Milliseconds(5);  // 0.5 s in all
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "auth: refused Placement/Select from ipv4:10.0.0.9:50312: "
            "UNAUTHENTICATED: authorization: unknown token");
  now += absl::Seconds(1);
  log.Note("ipv4:10.0.0.7:1", "Ctxsel/Ping", unknown);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr("from ipv4:10.0.0.7:1"));
  EXPECT_THAT(lines[1], HasSubstr("; 99 more refused since the previous line"));
}

TEST(RefusalLogTest, TextFromTheCallerCannotForgeALine) {
  std::vector<std::string> lines;
  RefusalLog log({.write = [&](const std::string& l) { lines.push_back(l); }});
  log.Note("ipv4:1.2.3.4:5", "Ctxsel/Ping",
           absl::PermissionDeniedError("'evil\nauth: all good' (role reader)"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines, ElementsAre(::testing::Not(HasSubstr("\n"))));
  EXPECT_THAT(lines[0], HasSubstr("evil\\nauth: all good"));
}

}  // namespace
}  // namespace ctxsel::server
