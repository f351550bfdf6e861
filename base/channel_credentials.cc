#include "base/channel_credentials.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/flag_file.h"
#include "base/status_macros.h"

namespace ctxsel {

void FillFromEnvironment(ClientSecurity& security, EnvironmentToken token) {
  if (security.insecure) return;
  if (const char* env = std::getenv("CTXSEL_CA");
      env != nullptr && security.ca_file.empty()) {
    security.ca_file = env;
  }
  if (const char* env = std::getenv("CTXSEL_TOKEN_FILE");
      env != nullptr && token == EnvironmentToken::kRead &&
      security.token_file.empty()) {
    security.token_file = env;
  }
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const ClientSecurity& security) {
  if (security.insecure) {
    if (!security.token_file.empty()) {
      return absl::InvalidArgumentError(
          "--token_file: a token is sent only over TLS, not with --insecure");
    }
    if (!security.ca_file.empty() || !security.cert_file.empty() ||
        !security.key_file.empty()) {
      return absl::InvalidArgumentError(
          "--insecure: not with --ca, --tls_cert or --tls_key");
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!security.ca_file.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::string ca,
                            ReadFlagFile("ca", security.ca_file));
    ssl.pem_root_certs = ca;
  }
  if (security.cert_file.empty() != security.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: give both or neither");
  }
  if (!security.cert_file.empty()) {
    CTXSEL_ASSIGN_OR_RETURN(std::string cert,
                            ReadFlagFile("tls_cert", security.cert_file));
    CTXSEL_ASSIGN_OR_RETURN(std::string key,
                            ReadFlagFile("tls_key", security.key_file));
    ssl.pem_cert_chain = cert;
    ssl.pem_private_key = key;
  }
  std::shared_ptr<grpc::ChannelCredentials> channel = grpc::SslCredentials(ssl);
  if (security.token_file.empty()) return channel;
  CTXSEL_ASSIGN_OR_RETURN(std::string text,
                          ReadFlagFile("token_file", security.token_file));
  const std::string token(
      absl::StripAsciiWhitespace(text.substr(0, text.find('\n'))));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token_file: ", security.token_file, " is empty"));
  }
  return grpc::CompositeChannelCredentials(channel,
                                           grpc::AccessTokenCredentials(token));
}

}  // namespace ctxsel
