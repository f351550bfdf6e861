#include "client/credentials.h"

#include <cstdlib>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

namespace ctxsel::client {
namespace {

// Each test starts from unset flags and environment.
class ClientSecurityFromFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::SetFlag(&FLAGS_insecure, false);
    absl::SetFlag(&FLAGS_ca, "");
    absl::SetFlag(&FLAGS_token_file, "");
    unsetenv("CTXSEL_CA");
    unsetenv("CTXSEL_TOKEN_FILE");
  }
};

TEST_F(ClientSecurityFromFlagsTest, EnvironmentFillsCaAndToken) {
  setenv("CTXSEL_CA", "/env/ca.pem", 1);
  setenv("CTXSEL_TOKEN_FILE", "/env/token", 1);
  ClientSecurity security = ClientSecurityFromFlags();
  EXPECT_EQ(security.ca_file, "/env/ca.pem");
  EXPECT_EQ(security.token_file, "/env/token");
}

TEST_F(ClientSecurityFromFlagsTest, FlagsWinOverEnvironment) {
  setenv("CTXSEL_CA", "/env/ca.pem", 1);
  setenv("CTXSEL_TOKEN_FILE", "/env/token", 1);
  absl::SetFlag(&FLAGS_ca, "/flag/ca.pem");
  absl::SetFlag(&FLAGS_token_file, "/flag/token");
  ClientSecurity security = ClientSecurityFromFlags();
  EXPECT_EQ(security.ca_file, "/flag/ca.pem");
  EXPECT_EQ(security.token_file, "/flag/token");
}

// A shell that exports both can still reach a plaintext server.
TEST_F(ClientSecurityFromFlagsTest, InsecureReadsNeitherVariable) {
  setenv("CTXSEL_CA", "/env/ca.pem", 1);
  setenv("CTXSEL_TOKEN_FILE", "/env/token", 1);
  absl::SetFlag(&FLAGS_insecure, true);
  ClientSecurity security = ClientSecurityFromFlags();
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
}  // namespace ctxsel::client
