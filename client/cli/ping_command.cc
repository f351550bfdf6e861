// ctxsel-cli ping: round-trips the no-op Ping call.
#include <cstdio>

#include "absl/flags/flag.h"
#include "client/cli/common_flags.h"
#include "client/ctxsel_client.h"

namespace ctxsel::cli {

int RunPing(const std::vector<std::string>& args) {
  auto client = client::CtxselClient::Connect(absl::GetFlag(FLAGS_server));
  absl::StatusOr<std::string> version = client->Ping();
  if (!version.ok()) {
    std::fprintf(stderr, "ping %s: %s\n", absl::GetFlag(FLAGS_server).c_str(),
                 version.status().ToString().c_str());
    return 1;
  }
  std::printf("pong from %s (ctxsel-server %s)\n",
              absl::GetFlag(FLAGS_server).c_str(), version->c_str());
  return 0;
}

}  // namespace ctxsel::cli
