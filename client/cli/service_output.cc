#include "client/cli/service_output.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_details.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/credentials.h"
#include "google/protobuf/util/json_util.h"

namespace ctxsel::cli {

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
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      client::MakeChannelCredentials(client::ClientSecurityFromFlags())
          .value_or(nullptr);
  return std::make_unique<client::CtxselClient>(
      grpc::CreateChannel(ServerAddress(), credentials),
      CallTimeoutFromFlags().value_or(std::chrono::milliseconds(5000)));
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

int ReportError(const std::string& what, const absl::Status& status) {
  std::string deadline;
  if (status.code() == absl::StatusCode::kDeadlineExceeded) {
    deadline = absl::StrCat(
        " [--timeout=", absl::FormatDuration(absl::GetFlag(FLAGS_timeout)),
        "]");
  }
  std::fprintf(stderr, "%s: %s%s\n", what.c_str(), ErrorText(status).c_str(),
               deadline.c_str());
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
      return kExitBadInput;
    case absl::StatusCode::kResourceExhausted:
      return kExitExhausted;
    default:
      return kExitFailure;
  }
}

int BadUsage(const std::string& what, absl::string_view message) {
  std::fprintf(stderr, "%s: %.*s\n", what.c_str(),
               static_cast<int>(message.size()), message.data());
  return kExitBadInput;
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json + "\n";
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size())
        line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string ExpiryText(const v1::Claim& claim) {
  const absl::Time expires = absl::FromUnixMillis(claim.expires_unix_ms());
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expires, absl::UTCTimeZone()),
      " (in ",
      absl::FormatDuration(
          absl::Trunc(expires - absl::Now(), absl::Seconds(1))),
      ")");
}

}  // namespace ctxsel::cli
