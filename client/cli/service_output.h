// service_output.h: what the service subcommands of ctxsel-cli share —
// connecting, exit codes for server errors, JSON and table output.
//
//   auto client = ConnectToServer();
//   absl::StatusOr<...> r = client->ListNodes(false);
//   if (!r.ok()) return ReportError("nodes ls", r.status());
//   PrintTable({{"NODE", "DEVICES"}, {"n1", "9"}});
#ifndef CTXSEL_CLIENT_CLI_SERVICE_OUTPUT_H_
#define CTXSEL_CLIENT_CLI_SERVICE_OUTPUT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/ctxsel_client.h"
#include "google/protobuf/message.h"

namespace ctxsel::cli {

// Exit code when the server cannot be reached (UNAVAILABLE, deadline).
inline constexpr int kExitUnreachable = 3;

// A client for --server, or $CTXSEL_SERVER when --server is not given.
std::unique_ptr<client::CtxselClient> ConnectToServer();
std::string ServerAddress();

// Prints "<what>: <status>" to stderr and returns the exit code for it:
// 3 unreachable, 2 bad input (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
// OUT_OF_RANGE), 1 otherwise (e.g. FAILED_PRECONDITION: no placement).
int ReportError(const std::string& what, const absl::Status& status);

// Prints "<what>: <message>" to stderr; returns 2.
int BadUsage(const std::string& what, const std::string& message);

// One message as JSON (proto field names), followed by a newline.
std::string ToJson(const google::protobuf::Message& message);

// Rows (the first is the header) as aligned columns on stdout.
void PrintTable(const std::vector<std::vector<std::string>>& rows);

// "a,b,c" from a repeated string field.
template <typename Repeated>
std::string JoinList(const Repeated& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ",";
    out += item;
  }
  return out.empty() ? "-" : out;
}

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_SERVICE_OUTPUT_H_
