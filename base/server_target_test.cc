#include "base/server_target.h"

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(ServerTargetTest, OneAddressIsUsedAsItIs) {
  EXPECT_EQ(ServerTarget("ctxsel.example:7070"), "ctxsel.example:7070");
  EXPECT_EQ(ServerTarget("127.0.0.1:7070"), "127.0.0.1:7070");
}

TEST(ServerTargetTest, AListBecomesOneStaticTarget) {
  EXPECT_EQ(ServerTarget("127.0.0.1:7070, 127.0.0.2:7071"),
            "ipv4:127.0.0.1:7070,127.0.0.2:7071");
  EXPECT_EQ(ServerTarget("[::1]:7070,[::1]:7071"),
            "ipv6:[::1]:7070,[::1]:7071");
}

TEST(ServerTargetTest, UnresolvableHostsAreLeftOut) {
  EXPECT_EQ(ServerTarget("no-such-host.invalid:1,127.0.0.1:2"),
            "ipv4:127.0.0.1:2");
  EXPECT_EQ(ServerTarget("no-such-host.invalid:1,also.invalid:2"),
            "no-such-host.invalid:1");
}

// The agent's rule: a list is its entries in turn, one per new channel,
// with TLS or without; one address is the target as given.
TEST(ServerRotationTest, ListsTurnOneAddressStays) {
  ServerRotation list("a:1, b:2");
  EXPECT_EQ(list.Next(), "a:1");
  EXPECT_EQ(list.Next(), "b:2");
  EXPECT_EQ(list.Next(), "a:1");
  ServerRotation one("a:1");
  EXPECT_EQ(one.Next(), "a:1");
  EXPECT_EQ(one.Next(), "a:1");
}

}  // namespace
}  // namespace ctxsel
