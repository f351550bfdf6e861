// common_flags.h: the flags that more than one ctxsel-cli command reads.
//
// A flag that one command alone reads is defined in that command's file;
// one shared by several is defined here, with help text that names no
// command. Job variables (--var) are parsed here too, so every command
// accepts and rejects the same spellings:
//
//   absl::StatusOr<JobVariables> vars = JobVariablesFromFlags();
//   if (!vars.ok()) return BadUsage("select", vars.status().message());
//
// -o/--output picks how results print (--json is -o json):
//
//   absl::StatusOr<OutputFormat> format = OutputFormatFromFlags();
//
// The TLS and token flags (--insecure, --ca, --tls_cert, --tls_key,
// --token_file), with $CTXSEL_CA and $CTXSEL_TOKEN_FILE for the unset ones:
//
//   ClientSecurity security = ClientSecurityFromFlags();
//
// --timeout is the deadline of every call a service command makes through
// the client library (each page of a listing has its own):
//
//   absl::StatusOr<std::chrono::milliseconds> t = CallTimeoutFromFlags();
#ifndef CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_
#define CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/channel_credentials.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(bool, insecure);
ABSL_DECLARE_FLAG(std::string, ca);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, token_file);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, output);
ABSL_DECLARE_FLAG(bool, no_headers);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(std::vector<std::string>, construct);
ABSL_DECLARE_FLAG(std::string, compiler);  // selector/compiler_profile.h
ABSL_DECLARE_FLAG(std::string, ties);
ABSL_DECLARE_FLAG(std::vector<std::string>, var);
ABSL_DECLARE_FLAG(std::string, device_filter);

namespace ctxsel::cli {

// The TLS and token flags; unless --insecure, --ca defaults to $CTXSEL_CA
// and --token_file to $CTXSEL_TOKEN_FILE.
ClientSecurity ClientSecurityFromFlags();

// How a command prints its result (-o): an aligned table, the table with
// its wide columns too, the result message as JSON or YAML, or one name per
// line (what other commands take as an argument).
enum class OutputFormat { kTable, kWide, kJson, kYaml, kName };

// -o, or json when --json is given; INVALID_ARGUMENT naming the flag and the
// accepted values otherwise.
absl::StatusOr<OutputFormat> OutputFormatFromFlags();

// Job variables in the order given, as (name, value).
using JobVariables = std::vector<std::pair<std::string, int64_t>>;

// The --var flag's NAME=INTEGER assignments; INVALID_ARGUMENT naming the
// first one that is not of that form (a range is one; see below).
absl::StatusOr<JobVariables> JobVariablesFromFlags();

// Variables with the values they take, in the order given.
using VariableRanges =
    std::vector<std::pair<std::string, std::vector<int64_t>>>;

// The --var flag with ranges: NAME=INTEGER, and INTEGERs after one
// continue its list ("--var=N=1,64,4096,M=2" gives N: 1, 64, 4096 and M: 2).
// INVALID_ARGUMENT naming the first item that is neither, or a name given
// twice.
absl::StatusOr<VariableRanges> VariableRangesFromFlags();

// The --construct list with the spaces selectors are written with removed
// ("target, teams" is target, teams); names are checked where the job is.
std::vector<std::string> ConstructNamesFromFlags();

// The --timeout flag as a per-call deadline, rounded up to whole
// milliseconds; INVALID_ARGUMENT naming the flag when it is not positive or
// is infinite.
absl::StatusOr<std::chrono::milliseconds> CallTimeoutFromFlags();

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_
