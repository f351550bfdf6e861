#include "client/cli/input_file.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

TEST(ReadInputFileTest, ReadsTheWholeFileByteForByte) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/in";
  const std::string content("line 1\r\nline 2\n\0tail", 20);
  std::ofstream(path, std::ios::binary) << content;
  absl::StatusOr<std::string> text = ReadInputFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, content);
}

TEST(ReadInputFileTest, MissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<std::string> text = ReadInputFile("/nonexistent/ctxsel.json");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(), "cannot read /nonexistent/ctxsel.json");
}

}  // namespace
}  // namespace ctxsel::cli
