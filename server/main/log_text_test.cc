#include "server/model/log_text.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/main/housekeeping.h"

namespace ctxsel::server {
namespace {

struct Case {
  std::string text;
  std::string logged;
};

TEST(LogSafeTest, EscapesControlCharactersAndBackslashes) {
  const Case cases[] = {
      {"node-1", "node-1"},
      {"a\n[info] forged", "a\\n[info] forged"},
      {"a\r\tb", "a\\r\\tb"},
      {"\x1b[31mred", "\\x1b[31mred"},
      {std::string("nul\0x", 5), "nul\\x00x"},
      {"del\x7f", "del\\x7f"},
      {"back\\n", "back\\\\n"},  // a literal backslash-n stays tellable
      {"gr\xc3\xbc\xc3\x9f", "gr\xc3\xbc\xc3\x9f"},  // UTF-8 kept
  };
  for (const Case& c : cases) {
    EXPECT_EQ(LogSafe(c.text), c.logged) << c.text;
  }
}

TEST(LogSafeTest, CutsLongText) {
  const std::string logged = LogSafe(std::string(kMaxLogTextBytes + 10, 'x'));
  EXPECT_EQ(logged, std::string(kMaxLogTextBytes, 'x') + "...");
  EXPECT_EQ(LogSafe(std::string(kMaxLogTextBytes, 'x')),
            std::string(kMaxLogTextBytes, 'x'));
}

// The housekeeping thread logs one line per inventory event; the node id
// and reason come from clients.
TEST(LogSafeTest, InventoryEventIsOneLogLine) {
  InventoryEvent event;
  event.kind = InventoryEvent::Kind::kAdded;
  NodeState node;
  node.id = "n1\n[2026-01-01 00:00:00.000] [ctxsel-server] [info] forged";
  event.node = std::make_shared<const NodeState>(std::move(node));
  event.reason = "report\r\n[info] forged too";
  const std::string line = DescribeEvent(event);
  EXPECT_THAT(line, ::testing::Not(::testing::HasSubstr("\n")));
  EXPECT_THAT(line, ::testing::Not(::testing::HasSubstr("\r")));
  EXPECT_THAT(line, ::testing::HasSubstr("n1\\n[2026"));
}

}  // namespace
}  // namespace ctxsel::server
