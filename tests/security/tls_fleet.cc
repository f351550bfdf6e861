#include "tests/security/tls_fleet.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {

absl::StatusOr<TlsFleet> TlsFleet::Make(const std::vector<std::string>& nodes) {
  TlsFleet fleet;
  fleet.dir_ = MakeTempDir("tls-fleet");
  std::vector<std::string> argv = {
      "/bin/bash", RunfilePath("tools/make_certs.sh"), fleet.dir_};
  argv.insert(argv.end(), nodes.begin(), nodes.end());
  CommandResult made = RunCommand(argv);
  if (made.exit_code != 0) {
    return absl::InternalError("make_certs.sh: " + made.stderr_text);
  }
  std::ofstream(fleet.dir_ + "/tokens");
  return fleet;
}

absl::StatusOr<std::string> TlsFleet::AddToken(const std::string& role,
                                               const std::string& name) {
  CommandResult made = RunCommand(
      {CliPath(), "admin", "token", "--role=" + role, "--name=" + name});
  if (made.exit_code != 0) {
    return absl::InternalError("ctxsel-cli admin token: " + made.stderr_text);
  }
  // The token on stdout, its tokens-file line on stderr.
  std::string token = made.stdout_text.substr(0, made.stdout_text.find('\n'));
  std::ofstream(dir_ + "/tokens", std::ios::app) << made.stderr_text;
  std::ofstream(absl::StrCat(dir_, "/", name, ".token")) << token << "\n";
  tokens_[name] = token;
  return token;
}

absl::Status TlsFleet::RemoveToken(const std::string& name) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(
           ReadFileOrEmpty(dir_ + "/tokens"), '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() >= 2 && fields[1] == name) continue;
    kept.emplace_back(line);
  }
  // Written whole, then renamed: the server never reads half a file.
  const std::string next = dir_ + "/tokens.next";
  std::ofstream(next) << absl::StrJoin(kept, "\n") << "\n";
  if (std::rename(next.c_str(), (dir_ + "/tokens").c_str()) != 0) {
    return absl::InternalError("cannot replace the tokens file");
  }
  tokens_.erase(name);
  return absl::OkStatus();
}

std::vector<std::string> TlsFleet::ServerFlags() const {
  return {
      "--tls_cert=" + dir_ + "/server.pem", "--tls_key=" + dir_ + "/server.key",
      "--client_ca=" + dir_ + "/ca.pem", "--tokens_file=" + dir_ + "/tokens"};
}

ClientSecurity TlsFleet::Anonymous() const {
  ClientSecurity security;
  security.ca_file = dir_ + "/ca.pem";
  return security;
}

ClientSecurity TlsFleet::Token(const std::string& name) const {
  ClientSecurity security = Anonymous();
  security.token_file = absl::StrCat(dir_, "/", name, ".token");
  return security;
}

ClientSecurity TlsFleet::Cert(const std::string& node) const {
  ClientSecurity security = Anonymous();
  security.cert_file = absl::StrCat(dir_, "/", node, ".pem");
  security.key_file = absl::StrCat(dir_, "/", node, ".key");
  return security;
}

std::shared_ptr<grpc::Channel> TlsFleet::Channel(
    const std::string& address, const ClientSecurity& security) const {
  auto credentials = MakeChannelCredentials(security);
  if (!credentials.ok()) return nullptr;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, *credentials, args);
}

}  // namespace ctxsel::testing
