// service_output.h: what the service subcommands of ctxsel-cli share —
// connecting, exit codes for server errors, the -o output formats.
//
//   auto client = ConnectToServer();
//   absl::StatusOr<...> r = client->ListNodes(false);
//   if (!r.ok()) return ReportError("nodes ls", r.status());
//   PrintTable({{"NODE", "DEVICES"}, {"n1", "9"}});
#ifndef CTXSEL_CLIENT_CLI_SERVICE_OUTPUT_H_
#define CTXSEL_CLIENT_CLI_SERVICE_OUTPUT_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/ctxsel_client.h"
#include "google/protobuf/message.h"

namespace ctxsel::cli {

// The server to talk to: --server when given, else $CTXSEL_SERVER when set,
// else kDefaultServer.
std::string ServerAddress();

// A client for ServerAddress() whose calls have the --timeout deadline,
// with the credentials of --insecure, --ca, --tls_cert, --tls_key and
// --token_file (common_flags.h).
std::unique_ptr<client::CtxselClient> ConnectToServer();

// "CODE: message", then one indented line per detail the server sent
// (field, reason with its metadata such as line and column, resource; see
// DescribeDetails in base/status_details.h). No trailing newline.
std::string ErrorText(const absl::Status& status);

// The exit code (command.h) that tells a caller what to do about `status`,
// by its ErrorInfo.reason (base/error_reasons.def) first: kExitExhausted for
// CLAIMS_EXHAUSTED (every fitting device claimed); kExitUnreachable for
// RATE_LIMITED and SERVER_BUSY (retry later); kExitBadInput for
// LIMIT_EXCEEDED (the request passes a server limit); kExitFailure for
// NODE_NOT_FOUND (its agent is not reporting). Otherwise by
// code: kExitOk for OK; kExitCredentials for UNAUTHENTICATED,
// PERMISSION_DENIED and an UNAVAILABLE whose message reports a failed TLS
// handshake (gRPC has no code of its own for it); kExitUnreachable for
// UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED; kExitExhausted for
// any other RESOURCE_EXHAUSTED (STORE_FULL: wait for room, as
// docs/service.md says; none: an older server's claimed devices);
// kExitFailure for FAILED_PRECONDITION (no placement) and any other code;
// kExitBadInput for INVALID_ARGUMENT, ALREADY_EXISTS, OUT_OF_RANGE and
// NOT_FOUND (an unknown kernel, variant or claim).
int ExitCodeOf(const absl::Status& status);

// For the statuses that exit kExitCredentials, what to fix, naming the flag
// or variable ("--token_file (or $CTXSEL_TOKEN_FILE)", "--ca (or
// $CTXSEL_CA)"); "" for the others.
std::string CredentialsHint(const absl::Status& status);

// Prints "<what>: <ErrorText>" to stderr, then CredentialsHint when there
// is one (a passed deadline also names the --timeout flag:
// "[--timeout=300ms]"), wrapped as PrintFitted does, and returns
// ExitCodeOf(status).
int ReportError(const std::string& what, const absl::Status& status);

// Prints "<what>: <message>" to stderr; returns kExitBadInput.
int BadUsage(const std::string& what, absl::string_view message);

// One message as JSON (proto field names, 64-bit integers as numbers, not
// proto3 JSON's strings), followed by a newline.
std::string ToJson(const google::protobuf::Message& message);

// The same document as YAML.
std::string ToYaml(const google::protobuf::Message& message);

// With -o json or yaml prints `message` so and returns true; false for the
// other formats, which the command prints itself.
bool PrintMessage(const google::protobuf::Message& message);

// A table column; `wide` ones show only with -o wide.
struct Column {
  std::string header;
  bool wide = false;
};

// A listing in every -o format: `message` for json and yaml, `names` (one
// per row, what other commands take) for name, `rows` (one cell per column)
// for table and wide.
struct Listing {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> names;
};
void PrintListing(const google::protobuf::Message& message,
                  const Listing& listing);

// Rows (the first is the header, left out with --no-headers) as aligned
// columns on stdout, fitting kTableWidth (text_fit.h: the widest columns'
// cells cut with "...", the last column's wrapped under it) except with
// -o wide, which prints every cell whole on one line per row.
void PrintTable(const std::vector<std::vector<std::string>>& rows);

// True with -o wide: tables and explanations print whole.
bool WideOutput();

// `text` to `out`, its long lines wrapped at kTableWidth (text_fit.h)
// unless -o wide; a newline is added when it has none at its end.
void PrintFitted(std::FILE* out, absl::string_view text);

// When a claim ends, e.g. "2024-05-01T10:00:00Z (in 4m59s)".
std::string ExpiryText(const v1::Claim& claim);

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
