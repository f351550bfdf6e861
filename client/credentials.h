// credentials.h: how a client (ctxsel-cli, ctxsel-agent, the C++ library)
// proves the server's identity and its own (docs/security.md).
//
//   ClientSecurity security;
//   security.ca_file = "ca.pem";             // verifies the server
//   security.token_file = "launcher.token";  // "authorization: Bearer ..."
//   absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
//       MakeChannelCredentials(security);
//   grpc::CreateChannel("ctxsel.example:7070", *credentials);
//
// The same flags in every client: --insecure, --ca, --tls_cert, --tls_key,
// --token_file (default $CTXSEL_TOKEN_FILE; --ca: $CTXSEL_CA);
// ClientSecurityFromFlags()
// reads them.
#ifndef CTXSEL_CLIENT_CREDENTIALS_H_
#define CTXSEL_CLIENT_CREDENTIALS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"

ABSL_DECLARE_FLAG(bool, insecure);
ABSL_DECLARE_FLAG(std::string, ca);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, token_file);

namespace ctxsel::client {

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

// The flags above; unless --insecure, --ca defaults to $CTXSEL_CA and
// --token_file to $CTXSEL_TOKEN_FILE.
ClientSecurity ClientSecurityFromFlags();

// TLS credentials (with the token as call credentials), or insecure ones.
// InvalidArgumentError naming the flag for an unreadable file, a
// certificate without its key (or a key without its certificate), an empty
// token file, or --insecure with a token, a CA or a certificate or key; the
// token itself never appears in a message.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientSecurity& security);

}  // namespace ctxsel::client

#endif  // CTXSEL_CLIENT_CREDENTIALS_H_
