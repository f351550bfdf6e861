// The credentials of a TLS test fleet in one temporary directory:
// certificates made by tools/make_certs.sh (a CA, the server's, one per
// node) and role tokens made by `ctxsel-cli admin token`, as an operator
// makes them (docs/security.md). The test must list //:tools/make_certs.sh
// and //client/cli:ctxsel-cli in `data`.
//
//   absl::StatusOr<TlsFleet> fleet = TlsFleet::Make({"node-a"});
//   ASSERT_TRUE(fleet->AddToken("launcher", "slurm").ok());
//   auto server = ServerProcess::Start(fleet->ServerFlags());
//   client::CtxselClient slurm(
//       fleet->Channel((*server)->address(), fleet->Token("slurm")));
#ifndef CTXSEL_TESTS_SECURITY_TLS_FLEET_H_
#define CTXSEL_TESTS_SECURITY_TLS_FLEET_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/channel_credentials.h"

namespace ctxsel::testing {

class TlsFleet {
 public:
  // A CA, the server's certificate (localhost, 127.0.0.1) and one client
  // certificate per node; an empty tokens file.
  static absl::StatusOr<TlsFleet> Make(const std::vector<std::string>& nodes);

  // A new token for `name` with `role`: its line is appended to the tokens
  // file and the token written to DIR/NAME.token. Returns the token.
  absl::StatusOr<std::string> AddToken(const std::string& role,
                                       const std::string& name);
  // Rewrites the tokens file without `name`'s lines: its tokens are revoked
  // once the server rereads the file (SIGHUP).
  absl::Status RemoveToken(const std::string& name);

  // --tls_cert, --tls_key, --client_ca and --tokens_file.
  std::vector<std::string> ServerFlags() const;
  // Client security: the fleet's CA and `name`'s token, or the certificate
  // of `node`, or neither (TLS without credentials).
  ClientSecurity Token(const std::string& name) const;
  ClientSecurity Cert(const std::string& node) const;
  ClientSecurity Anonymous() const;
  // A channel to `address` with `security`, on a connection of its own.
  std::shared_ptr<grpc::Channel> Channel(const std::string& address,
                                         const ClientSecurity& security) const;

  const std::string& dir() const { return dir_; }
  const std::map<std::string, std::string>& tokens() const { return tokens_; }

 private:
  std::string dir_;
  std::map<std::string, std::string> tokens_;  // name -> token
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_SECURITY_TLS_FLEET_H_
