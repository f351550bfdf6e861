#include "server/access/client_cert.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::server {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Certificates as tools/make_certs.sh issues them: the CA's, the server's
// and node n1's.
class ClientCertTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("client_cert"));
    const testing::CommandResult made = testing::RunCommand(
        {"/bin/bash", testing::RunfilePath("tools/make_certs.sh"), *dir_,
         "n1"});
    ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  }
  static std::string Pem(const std::string& name) {
    return testing::ReadFileOrEmpty(*dir_ + "/" + name + ".pem");
  }
  static std::string Fingerprint(const std::string& name) {
    return testing::RunCommand({"/usr/bin/openssl", "x509", "-in",
                                *dir_ + "/" + name + ".pem", "-noout",
                                "-fingerprint", "-sha256"})
        .stdout_text;
  }
  static std::string* dir_;
};
std::string* ClientCertTest::dir_ = nullptr;

TEST_F(ClientCertTest, AgentCertificateHasClientAuthAndTheMarker) {
  absl::StatusOr<ClientCert> cert = InspectClientCert(Pem("n1"));
  ASSERT_TRUE(cert.ok()) << cert.status();
  EXPECT_TRUE(cert->client_auth);
  EXPECT_TRUE(cert->agent);
  EXPECT_THAT(cert->names, Contains("n1"));
  EXPECT_THAT(cert->names, Contains(kAgentMarker));
  EXPECT_EQ(cert->fingerprint.size(), 64u);
}

TEST_F(ClientCertTest, ServerAndCaCertificatesAreNotAgents) {
  for (const std::string name : {"server", "ca"}) {
    absl::StatusOr<ClientCert> cert = InspectClientCert(Pem(name));
    ASSERT_TRUE(cert.ok()) << cert.status();
    EXPECT_FALSE(cert->client_auth) << name;
    EXPECT_FALSE(cert->agent) << name;
  }
  EXPECT_FALSE(InspectClientCert("not a certificate").ok());
}

TEST_F(ClientCertTest, DenyListByFingerprintAsOpensslPrintsItOrByName) {
  absl::StatusOr<ClientCert> n1 = InspectClientCert(Pem("n1"));
  absl::StatusOr<ClientCert> server = InspectClientCert(Pem("server"));
  ASSERT_TRUE(n1.ok() && server.ok());
  // "sha256 Fingerprint=AB:CD:..." -> "AB:CD:..."
  const std::string printed = Fingerprint("n1");
  const std::string colons =
      printed.substr(printed.find('=') + 1,
                     printed.find_last_not_of("\n") - printed.find('='));
  absl::StatusOr<RevokedCerts> by_fingerprint =
      ParseRevokedCerts("# revoked\nsha256 " + colons + "\n", "revoked");
  ASSERT_TRUE(by_fingerprint.ok()) << by_fingerprint.status();
  EXPECT_TRUE(by_fingerprint->Contains(*n1));
  EXPECT_FALSE(by_fingerprint->Contains(*server));

  absl::StatusOr<RevokedCerts> by_name =
      ParseRevokedCerts("name n1  # lost laptop\n\n", "revoked");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_TRUE(by_name->Contains(*n1));
  EXPECT_FALSE(by_name->Contains(*server));
  // The marker every agent carries names no one.
  absl::StatusOr<RevokedCerts> marker =
      ParseRevokedCerts(std::string("name ") + kAgentMarker, "revoked");
  ASSERT_TRUE(marker.ok());
  EXPECT_FALSE(marker->Contains(*n1));
}

TEST(RevokedCertsTest, BadLinesNameTheLineNotItsText) {
  for (const std::string text :
       {"sha256 1234", "fingerprint abc", "name", "name a b", "secret-xyz"}) {
    absl::StatusOr<RevokedCerts> parsed =
        ParseRevokedCerts("name ok\n" + text + "\n", "/etc/ctxsel/revoked");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_THAT(parsed.status().message(), HasSubstr("/etc/ctxsel/revoked:2"));
    EXPECT_THAT(std::string(parsed.status().message()),
                Not(HasSubstr("secret-xyz")));
  }
}

}  // namespace
}  // namespace ctxsel::server
