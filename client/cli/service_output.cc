#include "client/cli/service_output.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "base/channel_credentials.h"
#include "base/proto_time.h"
#include "base/server_target.h"
#include "base/status_details.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/json_output.h"
#include "client/cli/text_fit.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace ctxsel::cli {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;

// Proto3 JSON writes 64-bit integers as strings (JavaScript's doubles cannot
// hold them all); the CLI's users read them with jq and YAML tools, which
// want numbers, so `json` (the proto JSON of a `type` message) gets them back.
void IntegersAsNumbers(const Descriptor& type, nlohmann::ordered_json& json) {
  if (!json.is_object()) return;  // a well-known type written as a string
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor& field = *type.field(i);
    auto it = json.find(field.name());
    if (it == json.end()) continue;
    auto fix = [&field](nlohmann::ordered_json& value) {
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        IntegersAsNumbers(*field.message_type(), value);
      } else if (value.is_string() &&
                 (field.cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                  field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64)) {
        const std::string text = value.get<std::string>();
        value = field.cpp_type() == FieldDescriptor::CPPTYPE_INT64
                    ? nlohmann::ordered_json(std::stoll(text))
                    : nlohmann::ordered_json(std::stoull(text));
      }
    };
    if (field.is_map()) {
      const FieldDescriptor& map_value = *field.message_type()->map_value();
      for (auto& [key, value] : it->items()) {
        if (map_value.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          IntegersAsNumbers(*map_value.message_type(), value);
        }
      }
    } else if (field.is_repeated() && it->is_array()) {
      for (nlohmann::ordered_json& element : *it) fix(element);
    } else {
      fix(*it);
    }
  }
}

nlohmann::ordered_json JsonOf(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(text);
  IntegersAsNumbers(*message.GetDescriptor(), json);
  return json;
}

}  // namespace

std::string ServerAddress() {
  if (std::string flag = absl::GetFlag(FLAGS_server); !flag.empty()) {
    return flag;
  }
  const char* env = std::getenv("CTXSEL_SERVER");
  return env != nullptr && *env != '\0' ? env : kDefaultServer;
}

std::unique_ptr<client::CtxselClient> ConnectToServer() {
  // main() has rejected a bad --timeout and bad security flags before any
  // command runs.
  const ClientSecurity security = ClientSecurityFromFlags();
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      MakeChannelCredentials(security).value_or(nullptr);
  const std::chrono::milliseconds timeout =
      CallTimeoutFromFlags().value_or(std::chrono::milliseconds(5000));
  // One channel per replica of a list: the client fails over per call.
  return std::make_unique<client::CtxselClient>(
      ServerChannels(ServerAddress(), credentials), timeout);
}

std::string ErrorText(const absl::Status& status) {
  // The details are payloads: absl's default ToString would print them as
  // raw bytes.
  std::string text =
      status.ToString(absl::StatusToStringMode::kWithNoExtraData);
  std::string details = DescribeDetails(status);
  if (!details.empty()) details.pop_back();  // the last newline
  if (!details.empty()) absl::StrAppend(&text, "\n", details);
  return text;
}

namespace {

// gRPC reports a failed TLS handshake (unknown CA, wrong host name, a TLS
// client at a plaintext server) as UNAVAILABLE, like an unreachable server;
// only its message tells them apart.
bool IsTlsFailure(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kUnavailable) return false;
  const std::string message = absl::AsciiStrToLower(status.message());
  for (absl::string_view word : {"ssl", "tls", "handshake", "certificate"}) {
    if (absl::StrContains(message, word)) return true;
  }
  return false;
}

std::string Reason(const absl::Status& status) {
  std::optional<google::rpc::ErrorInfo> info =
      GetDetail<google::rpc::ErrorInfo>(status);
  if (!info.has_value() || info->domain() != kErrorDomain) return "";
  return info->reason();
}

// The reasons whose answer differs from their code's (ExitCodeOf).
struct ReasonExit {
  const char* reason;
  int exit_code;
};
constexpr ReasonExit kExitByReason[] = {
    {kReasonClaimsExhausted, kExitExhausted},
    {kReasonRateLimited, kExitUnreachable},
    {kReasonServerBusy, kExitUnreachable},
    {kReasonLimitExceeded, kExitBadInput},
    {kReasonNodeNotFound, kExitFailure},
};

}  // namespace

int ExitCodeOf(const absl::Status& status) {
  if (IsTlsFailure(status)) return kExitCredentials;
  const std::string reason = Reason(status);
  for (const ReasonExit& row : kExitByReason) {
    if (reason == row.reason) return row.exit_code;
  }
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitCredentials;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kCancelled:
      return kExitUnreachable;
    case absl::StatusCode::kResourceExhausted:
      // Without a reason (a server before error_reasons.def sent the code's
      // name) it reads as claimed devices, as it did then.
      return kExitExhausted;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

std::string CredentialsHint(const absl::Status& status) {
  if (IsTlsFailure(status)) {
    return "the TLS handshake failed: check that --ca (or $CTXSEL_CA) names "
           "the CA that signed the server's certificate and --server its "
           "name, that --tls_cert/--tls_key are a pair that CA accepts, or "
           "pass --insecure for a plaintext server";
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    return "the server did not accept the credentials: check the token in "
           "--token_file (or $CTXSEL_TOKEN_FILE), or --tls_cert/--tls_key";
  }
  if (status.code() == absl::StatusCode::kPermissionDenied) {
    return "the credentials may not do this: use a token (--token_file or "
           "$CTXSEL_TOKEN_FILE) whose role allows it (docs/security.md)";
  }
  return "";
}

int ReportError(const std::string& what, const absl::Status& status) {
  std::string deadline;
  if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    deadline = absl::StrCat(
        " [--timeout=", absl::FormatDuration(absl::GetFlag(FLAGS_timeout)),
        "]");
  }
  PrintFitted(stderr, absl::StrCat(what, ": ", ErrorText(status), deadline));
  if (std::string hint = CredentialsHint(status); !hint.empty()) {
    PrintFitted(stderr, absl::StrCat(what, ": ", hint));
  }
  return ExitCodeOf(status);
}

int BadUsage(const std::string& what, absl::string_view message) {
  PrintFitted(stderr, absl::StrCat(what, ": ", message));
  return kExitBadInput;
}

std::string ToJson(const google::protobuf::Message& message) {
  return JsonOf(message).dump() + "\n";
}

std::string ToYaml(const google::protobuf::Message& message) {
  return JsonToYaml(JsonOf(message));
}

bool PrintMessage(const google::protobuf::Message& message) {
  const OutputFormat format =
      OutputFormatFromFlags().value_or(OutputFormat::kTable);
  if (format == OutputFormat::kJson) {
    std::printf("%s", ToJson(message).c_str());
    return true;
  }
  if (format == OutputFormat::kYaml) {
    std::printf("%s", ToYaml(message).c_str());
    return true;
  }
  return false;
}

void PrintListing(const google::protobuf::Message& message,
                  const Listing& listing) {
  if (PrintMessage(message)) return;
  const OutputFormat format =
      OutputFormatFromFlags().value_or(OutputFormat::kTable);
  if (format == OutputFormat::kName) {
    for (const std::string& name : listing.names) {
      std::printf("%s\n", name.c_str());
    }
    return;
  }
  const bool wide = format == OutputFormat::kWide;
  std::vector<std::vector<std::string>> rows(1);
  for (const Column& column : listing.columns) {
    if (wide || !column.wide) rows[0].push_back(column.header);
  }
  for (const std::vector<std::string>& cells : listing.rows) {
    std::vector<std::string>& row = rows.emplace_back();
    for (size_t i = 0; i < cells.size() && i < listing.columns.size(); ++i) {
      if (wide || !listing.columns[i].wide) row.push_back(cells[i]);
    }
  }
  PrintTable(rows);
}

bool WideOutput() {
  return OutputFormatFromFlags().value_or(OutputFormat::kTable) ==
         OutputFormat::kWide;
}

void PrintFitted(std::FILE* out, absl::string_view text) {
  std::string fitted =
      WideOutput() ? std::string(text) : WrapText(text, kTableWidth);
  if (fitted.empty() || fitted.back() != '\n') fitted += '\n';
  std::fputs(fitted.c_str(), out);
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  const size_t first = absl::GetFlag(FLAGS_no_headers) ? 1 : 0;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  if (widths.empty()) return;
  const bool fit = !WideOutput();
  // The last column wraps rather than being cut: it asks for no more than
  // kWrappedColumn when the others are fitted, then takes the room left.
  if (fit) {
    std::vector<size_t> asked = widths;
    asked.back() = std::min(asked.back(), kWrappedColumn);
    asked = FitColumns(std::move(asked), kTableWidth);
    size_t start = 0;
    for (size_t i = 0; i + 1 < asked.size(); ++i)
      start += asked[i] + kColumnGap;
    asked.back() = std::max(
        asked.back(),
        std::min(widths.back(), kTableWidth - std::min(start, kTableWidth)));
    widths = std::move(asked);
  }
  for (size_t r = first; r < rows.size(); ++r) {
    const std::vector<std::string>& row = rows[r];
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i + 1 == row.size()) {
        // Continuation lines of a wrapped last cell start under it.
        const std::string cell = fit ? WrapText(row[i], widths[i], 2) : row[i];
        line += absl::StrReplaceAll(
            cell, {{"\n", "\n" + std::string(line.size(), ' ')}});
        break;
      }
      const std::string cell = fit ? Ellipsized(row[i], widths[i]) : row[i];
      line += cell;
      line += std::string(widths[i] - cell.size() + kColumnGap, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string ExpiryText(const v1::Claim& claim) {
  const absl::Time expires = FromProtoTimestamp(claim.expire_time());
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expires, absl::UTCTimeZone()),
      " (in ",
      absl::FormatDuration(
          absl::Trunc(expires - absl::Now(), absl::Seconds(1))),
      ")");
}

}  // namespace ctxsel::cli
