#include "base/port_file.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

TEST(PortFileTest, HoldsThePort) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  ASSERT_TRUE(WritePortFile(dir + "/port", 4242).ok());
  std::ifstream in(dir + "/port");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "4242\n");
  EXPECT_FALSE(WritePortFile(dir + "/missing/port", 1).ok());
}

}  // namespace
}  // namespace ctxsel
