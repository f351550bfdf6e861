// channel_credentials.h: how a client of the server (ctxsel-cli,
// ctxsel-agent, the Slurm plugin, the C++ library) proves the server's
// identity and its own (docs/security.md).
//
//   ClientSecurity security;
//   security.ca_file = "ca.pem";             // verifies the server
//   security.token_file = "launcher.token";  // "authorization: Bearer ..."
//   FillFromEnvironment(security, EnvironmentToken::kRead);  // $CTXSEL_CA ...
//   absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
//       MakeChannelCredentials(security);
//   grpc::CreateChannel("ctxsel.example:7070", *credentials);
//
// Each binary defines its own flags (--insecure, --ca, --tls_cert, --tls_key,
// --token_file) and fills a ClientSecurity from them; the messages below name
// those flags.
#ifndef CTXSEL_BASE_CHANNEL_CREDENTIALS_H_
#define CTXSEL_BASE_CHANNEL_CREDENTIALS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ctxsel {

struct ClientSecurity {
  // Plaintext: no TLS, and no token (a token would travel in the clear).
  bool insecure = false;
  // PEM CA that signed the server's certificate; empty: the system's roots.
  std::string ca_file;
  // A client certificate and its key (mTLS: agents, or any client whose
  // certificate maps to a role). Both or neither.
  std::string cert_file;
  std::string key_file;
  // A file whose first line is a bearer token; empty: none.
  std::string token_file;
};

// Whether $CTXSEL_TOKEN_FILE may name the caller's token. A person's shell
// exports it for ctxsel-cli; a daemon started from that shell (the agent)
// must not speak with that person's token, so it passes kIgnore.
enum class EnvironmentToken { kRead, kIgnore };

// Fills what `security` leaves unset from the environment: ca_file from
// $CTXSEL_CA and, with kRead, token_file from $CTXSEL_TOKEN_FILE. Nothing
// with `insecure`, so a shell that exports them can still reach a plaintext
// server.
void FillFromEnvironment(ClientSecurity& security, EnvironmentToken token);

// TLS credentials (with the token as call credentials), or insecure ones.
// InvalidArgumentError naming the flag for an unreadable file, a
// certificate without its key (or a key without its certificate), an empty
// token file, or --insecure with a token, a CA or a certificate or key; the
// token itself never appears in a message.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientSecurity& security);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_CHANNEL_CREDENTIALS_H_
