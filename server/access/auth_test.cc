#include "server/access/auth.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "base/status_details.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

TEST(Sha256HexTest, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A new RPC without a row would be refused to everyone: every method of
// every ctxsel.v1 service has one.
TEST(MethodTableTest, EveryRpcHasARule) {
  const google::protobuf::FileDescriptor* file =
      v1::PingRequest::descriptor()->file();
  int methods = 0;
  for (int s = 0; s < file->service_count(); ++s) {
    const google::protobuf::ServiceDescriptor* service = file->service(s);
    for (int m = 0; m < service->method_count(); ++m) {
      ++methods;
      const std::string method =
          service->name() + "/" + service->method(m)->name();
      EXPECT_TRUE(HasMethodRule(method)) << method;
    }
  }
  EXPECT_GE(methods, 18);
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role role :
       {Role::kAdmin, Role::kAgent, Role::kLauncher, Role::kReader}) {
    EXPECT_EQ(*RoleFromName(RoleName(role)), role);
  }
  EXPECT_EQ(RoleFromName("root").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(NewTokenTest, FreshAndLong) {
  const std::string a = NewToken();
  EXPECT_EQ(a.size(), 4u + 64u);
  EXPECT_NE(a, NewToken());
}

TEST(ParseTokensTest, TokenLinesAndCertLines) {
  const std::string token = "ctx_secret";
  const std::string text = "# fleet tokens\n" +
                           TokenLine(Role::kLauncher, "slurm", token) +
                           "\n\nadmin ops-laptop cert  # a certificate\n";
  absl::StatusOr<TokenTable> table = ParseTokens(text, "tokens");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->by_hash.count(Sha256Hex(token)), 1u);
  EXPECT_EQ(table->by_hash.at(Sha256Hex(token)).name, "slurm");
  EXPECT_EQ(table->by_hash.at(Sha256Hex(token)).role, Role::kLauncher);
  EXPECT_EQ(table->cert_roles.at("ops-laptop"), Role::kAdmin);
}

TEST(ParseTokensTest, ARawTokenIsRefusedWithoutBeingEchoed) {
  absl::StatusOr<TokenTable> table =
      ParseTokens("reader bob ctx_plaintext_token\n", "tokens");
  ASSERT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("tokens:1:"), std::string::npos);
  EXPECT_EQ(table.status().message().find("ctx_plaintext_token"),
            std::string::npos);
}

TEST(ParseTokensTest, BadRoleAndFieldCountNameTheLine) {
  EXPECT_NE(ParseTokens("\nroot x cert\n", "t")
                .status()
                .message()
                .find("t:2: role: the first field is not one of admin"),
            std::string::npos);
  // A token typed into the role field is not echoed either.
  const absl::Status token_as_role =
      ParseTokens("ctx_secret_in_role bob " + Sha256Hex("x") + "\n", "t")
          .status();
  EXPECT_EQ(token_as_role.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(token_as_role.message().find("ctx_secret_in_role"),
            std::string::npos)
      << token_as_role;
  EXPECT_NE(ParseTokens("admin x\n", "t").status().message().find("t:1:"),
            std::string::npos);
}

TEST(ParseTokensTest, ClaimCapsOnTokenLinesAndQuotaLines) {
  const std::string text = TokenLine(Role::kLauncher, "slurm", "ctx_a") +
                           " max_claims=64 max_device_hours=12.5\n"
                           "admin ops cert max_claims=2\n"
                           "quota holder_prefix=slurm-42. max_claims=8\n";
  absl::StatusOr<TokenTable> table = ParseTokens(text, "tokens");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->principal_limits.at("slurm").max_claims, 64);
  EXPECT_EQ(table->principal_limits.at("slurm").max_device_hours, 12.5);
  EXPECT_EQ(table->principal_limits.at("ops").max_claims, 2);
  EXPECT_EQ(table->holder_limits.at("slurm-42.").max_claims, 8);
  EXPECT_EQ(table->by_hash.at(Sha256Hex("ctx_a")).name, "slurm");
  for (const char* bad :
       {"quota max_claims=1\n", "quota holder_prefix=x max_claims=-1\n",
        "admin ops cert max_claim=2\n", "admin ops cert holder_prefix=x\n"}) {
    absl::StatusOr<TokenTable> refused = ParseTokens(bad, "t");
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_EQ(refused.status().message().rfind("t:1: ", 0), 0u) << bad;
  }
}

TEST(AuthorizerTest, AgentsActOnlyForTheirOwnNode) {
  const Principal agent{"node-a", Role::kAgent};
  EXPECT_TRUE(Authorizer::CheckNode(agent, "node-a").ok());
  absl::Status denied = Authorizer::CheckNode(agent, "node-b");
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("'node-a'"), std::string::npos);
  EXPECT_NE(denied.message().find("'node-b'"), std::string::npos);
  EXPECT_TRUE(Authorizer::CheckNode({"ops", Role::kAdmin}, "node-b").ok());
}

TEST(AuthorizerTest, OnlyOwnersAndAdminsActOnClaims) {
  EXPECT_TRUE(Authorizer::MayActFor({"slurm", Role::kLauncher}, "slurm"));
  EXPECT_FALSE(Authorizer::MayActFor({"k8s", Role::kLauncher}, "slurm"));
  EXPECT_TRUE(Authorizer::MayActFor({"ops", Role::kAdmin}, "slurm"));
}

// A tokens file in the test's temporary directory, rewritten by Write().
class TokensFile {
 public:
  TokensFile()
      : path_(std::string(std::getenv("TEST_TMPDIR")) + "/tokens-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
  }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Credential Token(const std::string& token) {
  return {Credential::Kind::kToken, Sha256Hex(token)};
}

// A verified client certificate named `name`: with the clientAuth usage
// unless `client_auth` is off, an agent's when `agent`.
std::string ErrorReasonOf(const absl::Status& status) {
  auto info = GetDetail<google::rpc::ErrorInfo>(status);
  return info.has_value() ? info->reason() : "";
}

Credential Cert(const std::string& name, bool agent, bool client_auth = true) {
  Credential credential{Credential::Kind::kCertificate, name};
  credential.cert.fingerprint = Sha256Hex(name);
  credential.cert.names = {name};
  credential.cert.client_auth = client_auth;
  credential.cert.agent = agent && client_auth;
  return credential;
}

TEST(AuthorizerTest, OnlyMarkedClientCertificatesAreAgents) {
  Authorizer authorizer(AuthOptions{});
  ASSERT_TRUE(authorizer.Load().ok());
  absl::StatusOr<Principal> agent = authorizer.Authorize(
      Cert("node-a", /*agent=*/true), "Inventory/Heartbeat");
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->role, Role::kAgent);
  // Signed by the same CA, but without the marker (a server's certificate,
  // or another client's), or without clientAuth: refused, never an agent.
  for (const Credential& refused :
       {Cert("localhost", /*agent=*/false, /*client_auth=*/false),
        Cert("node-a", /*agent=*/true, /*client_auth=*/false),
        Cert("node-a", /*agent=*/false)}) {
    absl::StatusOr<Principal> who =
        authorizer.Authorize(refused, "Inventory/Heartbeat");
    ASSERT_FALSE(who.ok()) << refused.id;
    EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(ErrorReasonOf(who.status()), kReasonCertificateRefused);
  }
}

TEST(StreamGrantTest, ARevokedCertificateLosesItsStreamsOnReload) {
  const std::string revoked_path =
      std::string(std::getenv("TEST_TMPDIR")) + "/revoked_certs";
  std::ofstream(revoked_path) << "# none yet\n";
  Authorizer authorizer(AuthOptions{.revoked_certs = revoked_path});
  ASSERT_TRUE(authorizer.Load().ok());
  int a_revoked = 0;
  int b_revoked = 0;
  auto a = authorizer.AuthorizeStream(
      Cert("node-a", true), "Inventory/Heartbeat", [&] { ++a_revoked; });
  auto b = authorizer.AuthorizeStream(
      Cert("node-b", true), "Inventory/Heartbeat", [&] { ++b_revoked; });
  ASSERT_TRUE(a.ok() && b.ok());
  // One by name, one by fingerprint (as openssl prints it: upper case, colons).
  std::string fingerprint;
  for (size_t i = 0; i < Cert("node-b", true).cert.fingerprint.size(); i += 2) {
    if (i > 0) fingerprint += ':';
    fingerprint += absl::AsciiStrToUpper(
        Cert("node-b", true).cert.fingerprint.substr(i, 2));
  }
  std::ofstream(revoked_path) << "name node-a\n";
  EXPECT_EQ(*authorizer.Load(), 1);
  EXPECT_EQ(a_revoked, 1);
  EXPECT_EQ(b_revoked, 0);
  std::ofstream(revoked_path) << "name node-a\nsha256 " << fingerprint << "\n";
  EXPECT_EQ(*authorizer.Load(), 1);
  EXPECT_EQ(b_revoked, 1);
  // New calls are refused too.
  absl::StatusOr<Principal> again =
      authorizer.Authorize(Cert("node-b", true), "Inventory/ReportNode");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(ErrorReasonOf(again.status()), kReasonCertificateRefused);
  EXPECT_TRUE(
      authorizer.Authorize(Cert("node-c", true), "Inventory/ReportNode").ok());
}

TEST(StreamGrantTest, AReloadRevokesTheStreamsOfATokenItNoLongerHolds) {
  TokensFile file;
  file.Write(TokenLine(Role::kReader, "dashboard", "ctx_a") + "\n" +
             TokenLine(Role::kReader, "grafana", "ctx_b") + "\n");
  Authorizer authorizer(AuthOptions{.tokens_file = file.path()});
  ASSERT_TRUE(authorizer.Load().ok());
  int dashboard_revoked = 0;
  int grafana_revoked = 0;
  absl::StatusOr<Authorizer::StreamGrant> dashboard =
      authorizer.AuthorizeStream(Token("ctx_a"), "Inventory/WatchInventory",
                                 [&] { ++dashboard_revoked; });
  ASSERT_TRUE(dashboard.ok()) << dashboard.status();
  EXPECT_EQ(dashboard->principal().name, "dashboard");
  absl::StatusOr<Authorizer::StreamGrant> grafana = authorizer.AuthorizeStream(
      Token("ctx_b"), "Inventory/WatchInventory", [&] { ++grafana_revoked; });
  ASSERT_TRUE(grafana.ok()) << grafana.status();

  file.Write(TokenLine(Role::kReader, "grafana", "ctx_b") + "\n");
  EXPECT_EQ(*authorizer.Load(), 1);
  EXPECT_EQ(dashboard_revoked, 1);
  EXPECT_EQ(grafana_revoked, 0);
  // Once: a later reload does not revoke it again.
  EXPECT_EQ(*authorizer.Load(), 0);
  EXPECT_EQ(dashboard_revoked, 1);
}

TEST(StreamGrantTest, ARoleThatMayNoLongerCallTheMethodIsRevoked) {
  TokensFile file;
  file.Write(TokenLine(Role::kReader, "dashboard", "ctx_a") +
             "\nadmin ops-laptop cert\n");
  Authorizer authorizer(AuthOptions{.tokens_file = file.path()});
  ASSERT_TRUE(authorizer.Load().ok());
  int revoked = 0;
  auto watch = authorizer.AuthorizeStream(
      Token("ctx_a"), "Inventory/WatchInventory", [&] { ++revoked; });
  ASSERT_TRUE(watch.ok());
  auto laptop = authorizer.AuthorizeStream(Cert("ops-laptop", false),
                                           "Inventory/WatchInventory",
                                           [&] { ++revoked; });
  ASSERT_TRUE(laptop.ok());
  EXPECT_EQ(laptop->principal().role, Role::kAdmin);

  // The same token, now an agent's; the certificate, without the agent
  // marker, is no one's.
  file.Write(TokenLine(Role::kAgent, "dashboard", "ctx_a") + "\n");
  EXPECT_EQ(*authorizer.Load(), 2);
  EXPECT_EQ(revoked, 2);
}

TEST(StreamGrantTest, AClosedStreamIsForgottenAndCountsNoMore) {
  TokensFile file;
  file.Write(TokenLine(Role::kReader, "dashboard", "ctx_a") + "\n");
  AuthOptions options{.tokens_file = file.path()};
  options.limits.max_streams = 1;
  Authorizer authorizer(options);
  ASSERT_TRUE(authorizer.Load().ok());
  int revoked = 0;
  {
    auto watch = authorizer.AuthorizeStream(
        Token("ctx_a"), "Inventory/WatchInventory", [&] { ++revoked; });
    ASSERT_TRUE(watch.ok());
    EXPECT_EQ(
        authorizer
            .AuthorizeStream(Token("ctx_a"), "Inventory/WatchInventory", [] {})
            .status()
            .code(),
        absl::StatusCode::kResourceExhausted);
  }
  file.Write("# nobody\n");
  EXPECT_EQ(*authorizer.Load(), 0);
  EXPECT_EQ(revoked, 0);
  EXPECT_EQ(
      authorizer
          .AuthorizeStream(Token("ctx_a"), "Inventory/WatchInventory", [] {})
          .status()
          .code(),
      absl::StatusCode::kUnauthenticated);
}

TEST(StreamGrantTest, AFileThatDoesNotParseRevokesNothing) {
  TokensFile file;
  file.Write(TokenLine(Role::kReader, "dashboard", "ctx_a") + "\n");
  Authorizer authorizer(AuthOptions{.tokens_file = file.path()});
  ASSERT_TRUE(authorizer.Load().ok());
  int revoked = 0;
  auto watch = authorizer.AuthorizeStream(
      Token("ctx_a"), "Inventory/WatchInventory", [&] { ++revoked; });
  ASSERT_TRUE(watch.ok());
  file.Write("reader\n");
  EXPECT_FALSE(authorizer.Load().ok());
  EXPECT_EQ(revoked, 0);
}

}  // namespace
}  // namespace ctxsel::server
