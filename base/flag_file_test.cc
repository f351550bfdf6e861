#include "base/flag_file.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel {
namespace {

using ::testing::HasSubstr;

TEST(ReadFlagFileTest, ReadsTheWholeFile) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/token";
  std::ofstream(path) << "line one\nline two\n";
  absl::StatusOr<std::string> text = ReadFlagFile("token_file", path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "line one\nline two\n");
}

// A tokens file emptied to revoke every token must load as empty.
TEST(ReadFlagFileTest, AnEmptyFileIsEmptyText) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/empty";
  std::ofstream(path).flush();
  absl::StatusOr<std::string> text = ReadFlagFile("tokens_file", path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "");
}

TEST(ReadFlagFileTest, AMissingFileNamesTheFlagAndThePath) {
  absl::StatusOr<std::string> text =
      ReadFlagFile("tls_cert", "/nonexistent/server.pem");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(),
              HasSubstr("--tls_cert: cannot read /nonexistent/server.pem"));
}

TEST(ReadFlagFileTest, ADirectoryCannotBeRead) {
  absl::StatusOr<std::string> text =
      ReadFlagFile("ca", std::getenv("TEST_TMPDIR"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadPemFlagFileTest, TextWithoutAPemBlockNamesTheFlagAndThePath) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ofstream(dir + "/not.pem") << "hello\n";
  std::ofstream(dir + "/ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  absl::StatusOr<std::string> text =
      ReadPemFlagFile("etcd_ca", dir + "/not.pem");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(),
              HasSubstr("--etcd_ca: " + dir + "/not.pem holds no PEM block"));
  EXPECT_TRUE(ReadPemFlagFile("etcd_ca", dir + "/ca.pem").ok());
  EXPECT_FALSE(ReadPemFlagFile("etcd_ca", dir + "/missing.pem").ok());
}

}  // namespace
}  // namespace ctxsel
