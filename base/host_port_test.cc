#include "base/host_port.h"

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(HostPortTest, SplitsAtTheLastColon) {
  absl::StatusOr<HostPort> v6 = ParseHostPort("[::1]:7070");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "7070");
  absl::StatusOr<HostPort> any = ParseHostPort("*:0");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->host, "");
  EXPECT_EQ(any->port, "0");
}

// host_port.h promises a port of digits; the port string is handed on to
// gRPC and civetweb as it is, so "+80" or " 80" must not pass for 80.
TEST(HostPortTest, PortIsDigitsOnly) {
  for (const char* address :
       {"127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:80 ",
        "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "7070"}) {
    EXPECT_EQ(ParseHostPort(address).status().code(),
              absl::StatusCode::kInvalidArgument)
        << address;
  }
}

}  // namespace
}  // namespace ctxsel
