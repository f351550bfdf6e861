#include "client/cli/common_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

ABSL_FLAG(std::string, server, "",
          "Address of the ctxsel server, host:port, or a list of replicas "
          "a:7070,b:7070 to fail over between (default: $CTXSEL_SERVER, "
          "else the address `ctxsel-cli help` shows).");
ABSL_FLAG(bool, insecure, false,
          "Talk plaintext to a server started with --insecure (no TLS, no "
          "token).");
ABSL_FLAG(std::string, ca, "",
          "PEM CA that signed the server's certificate (default: "
          "$CTXSEL_CA, else the system's roots).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate (mTLS), with --tls_key.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, token_file, "",
          "File holding a bearer token (default: $CTXSEL_TOKEN_FILE).");
ABSL_FLAG(bool, json, false, "Print machine-readable JSON (-o json).");
ABSL_FLAG(std::string, output, "table",
          "Output format: table, wide (more columns), json, yaml or name.");
ABSL_FLAG(bool, no_headers, false, "Print tables without their header line.");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(5),
          "Deadline of each call to the server, e.g. 300ms or 1m; a call "
          "that passes it exits 3.");
ABSL_FLAG(std::string, kernel, "",
          "The kernel (base function) whose variants are selected.");
ABSL_FLAG(std::vector<std::string>, construct, {},
          "Construct trait set of the call site, outermost first, e.g. "
          "target,teams,parallel,for.");
ABSL_FLAG(std::string, compiler, "",
          "select/explain/eval: answer for the binary this compiler builds: "
          "spec (the OpenMP texts, the default), gcc-12 or clang-14");
ABSL_FLAG(std::string, ties, "",
          "select/explain/eval: which of equal-scored declare variant "
          "candidates wins: first or last declared (default: the compiler's; "
          "spec: first)");
ABSL_FLAG(std::vector<std::string>, var, {},
          "Job variables as NAME=INTEGER, e.g. N=4096,tasking=1.");
ABSL_FLAG(std::string, device_filter, "",
          "select/explain/run, devices ls: only devices that pass this device "
          "filter, a selector of device and target_device traits, e.g. "
          "'device={kind(gpu)}' (docs/placement.md).");

namespace ctxsel::cli {

ClientSecurity ClientSecurityFromFlags() {
  ClientSecurity security;
  security.insecure = absl::GetFlag(FLAGS_insecure);
  security.ca_file = absl::GetFlag(FLAGS_ca);
  security.cert_file = absl::GetFlag(FLAGS_tls_cert);
  security.key_file = absl::GetFlag(FLAGS_tls_key);
  security.token_file = absl::GetFlag(FLAGS_token_file);
  FillFromEnvironment(security, EnvironmentToken::kRead);
  return security;
}

absl::StatusOr<OutputFormat> OutputFormatFromFlags() {
  if (absl::GetFlag(FLAGS_json)) return OutputFormat::kJson;
  static constexpr std::pair<const char*, OutputFormat> kFormats[] = {
      {"table", OutputFormat::kTable},
      {"wide", OutputFormat::kWide},
      {"json", OutputFormat::kJson},
      {"yaml", OutputFormat::kYaml},
      {"name", OutputFormat::kName}};
  const std::string output = absl::GetFlag(FLAGS_output);
  for (const auto& [name, format] : kFormats) {
    if (output == name) return format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--output: '", output, "' is not table, wide, json, yaml or name"));
}

absl::StatusOr<VariableRanges> VariableRangesFromFlags() {
  VariableRanges out;
  for (const std::string& item : absl::GetFlag(FLAGS_var)) {
    const size_t eq = item.find('=');
    int64_t value = 0;
    const std::string number =
        eq == std::string::npos ? item : item.substr(eq + 1);
    if (eq == 0 || !absl::SimpleAtoi(number, &value) ||
        (eq == std::string::npos && out.empty())) {
      return absl::InvalidArgumentError(
          absl::StrCat("--var: '", item, "' is not NAME=INTEGER"));
    }
    if (eq != std::string::npos) {
      const std::string name = item.substr(0, eq);
      for (const auto& [seen, values] : out) {
        if (seen == name) {
          return absl::InvalidArgumentError(
              absl::StrCat("--var: '", name, "' is given twice"));
        }
      }
      out.emplace_back(name, std::vector<int64_t>{});
    }
    out.back().second.push_back(value);
  }
  return out;
}

absl::StatusOr<JobVariables> JobVariablesFromFlags() {
  CTXSEL_ASSIGN_OR_RETURN(VariableRanges ranges, VariableRangesFromFlags());
  JobVariables out;
  for (const auto& [name, values] : ranges) {
    if (values.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--var: '", values[1], "' is not NAME=INTEGER"));
    }
    out.emplace_back(name, values[0]);
  }
  return out;
}

std::vector<std::string> ConstructNamesFromFlags() {
  std::vector<std::string> names;
  for (const std::string& item : absl::GetFlag(FLAGS_construct)) {
    names.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return names;
}

absl::StatusOr<std::chrono::milliseconds> CallTimeoutFromFlags() {
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout <= absl::ZeroDuration() || timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout: must be a positive, finite duration, got ",
                     absl::FormatDuration(timeout)));
  }
  return absl::ToChronoMilliseconds(absl::Ceil(timeout, absl::Milliseconds(1)));
}

}  // namespace ctxsel::cli
