// ctxsel-cli ping: round-trips the no-op Ping call to ServerAddress().
#include <cstdio>
#include <string>
#include <vector>

#include "client/cli/command.h"
#include "client/cli/service_output.h"

namespace ctxsel::cli {
namespace {

int RunPing(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kPingCommand);
  const std::string address = ServerAddress();
  absl::StatusOr<std::string> version = ConnectToServer()->Ping();
  if (!version.ok()) return ReportError("ping " + address, version.status());
  std::printf("pong from %s (ctxsel-server %s)\n", address.c_str(),
              version->c_str());
  return kExitOk;
}

}  // namespace

const Command kPingCommand = {"ping", "ping", "Check that the server answers.",
                              RunPing};

}  // namespace ctxsel::cli
