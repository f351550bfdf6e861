#include "base/channel_credentials.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace ctxsel {
namespace {

// Each test starts from an unset environment.
class FillFromEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("CTXSEL_CA");
    unsetenv("CTXSEL_TOKEN_FILE");
  }
  // A shell that exports both variables, as docs/launchers.md shows.
  static void ExportBoth() {
    setenv("CTXSEL_CA", "/env/ca.pem", 1);
    setenv("CTXSEL_TOKEN_FILE", "/env/token", 1);
  }
};

TEST_F(FillFromEnvironmentTest, FillsCaAndToken) {
  ExportBoth();
  ClientSecurity security;
  FillFromEnvironment(security, EnvironmentToken::kRead);
  EXPECT_EQ(security.ca_file, "/env/ca.pem");
  EXPECT_EQ(security.token_file, "/env/token");
}

TEST_F(FillFromEnvironmentTest, SetValuesWin) {
  ExportBoth();
  ClientSecurity security;
  security.ca_file = "/flag/ca.pem";
  security.token_file = "/flag/token";
  FillFromEnvironment(security, EnvironmentToken::kRead);
  EXPECT_EQ(security.ca_file, "/flag/ca.pem");
  EXPECT_EQ(security.token_file, "/flag/token");
}

// A daemon started from a person's shell keeps its own identity.
TEST_F(FillFromEnvironmentTest, IgnoreTakesTheCaButNotTheToken) {
  ExportBoth();
  ClientSecurity security;
  FillFromEnvironment(security, EnvironmentToken::kIgnore);
  EXPECT_EQ(security.ca_file, "/env/ca.pem");
  EXPECT_EQ(security.token_file, "");
}

// A shell that exports both can still reach a plaintext server.
TEST_F(FillFromEnvironmentTest, InsecureReadsNeitherVariable) {
  ExportBoth();
  ClientSecurity security;
  security.insecure = true;
  FillFromEnvironment(security, EnvironmentToken::kRead);
  EXPECT_EQ(security.ca_file, "");
  EXPECT_EQ(security.token_file, "");
  EXPECT_TRUE(MakeChannelCredentials(security).ok());
}

// --insecure sends no certificate, so a lone --tls_key is as much a mistake
// as --tls_cert (the error message names all three flags).
TEST(MakeChannelCredentialsTest, InsecureRefusesEveryTlsFile) {
  for (ClientSecurity security : {ClientSecurity{true, "ca.pem", "", "", ""},
                                  ClientSecurity{true, "", "c.pem", "", ""},
                                  ClientSecurity{true, "", "", "c.key", ""}}) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        MakeChannelCredentials(security);
    EXPECT_EQ(credentials.status().code(), absl::StatusCode::kInvalidArgument)
        << "ca '" << security.ca_file << "' cert '" << security.cert_file
        << "' key '" << security.key_file << "'";
  }
}

}  // namespace
}  // namespace ctxsel
