#include "server/access/auth.h"

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
                .find("t:2: role: 'root'"),
            std::string::npos);
  EXPECT_NE(ParseTokens("admin x\n", "t").status().message().find("t:1:"),
            std::string::npos);
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

}  // namespace
}  // namespace ctxsel::server
