#include "client/cli/byte_size.h"

#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

TEST(ByteSizeTest, ReadsUnitsOfBothKinds) {
  EXPECT_EQ(*ParseByteSize("60GiB"), uint64_t{60} << 30);
  EXPECT_EQ(*ParseByteSize("60gib"), uint64_t{60} << 30);
  EXPECT_EQ(*ParseByteSize("512MiB"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("80GB"), uint64_t{80} * 1000 * 1000 * 1000);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("7B"), 7u);
}

TEST(ByteSizeTest, RefusesWhatIsNotASize) {
  for (const char* bad : {"", "GiB", "60 GiB", "-1GiB", "1.5GiB", "60GiBs",
                          "20000000TiB", "99999999999999999999"}) {
    EXPECT_FALSE(ParseByteSize(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace ctxsel::cli
