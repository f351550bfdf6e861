// ctxsel-cli select / explain: ask the server where a job should run.
//
//   ctxsel-cli select --kernel=saxpy --construct=target,teams,parallel,for
//       --var=N=4096 [--policy=spread] [--format=table|json|env]
//   env="$(ctxsel-cli select --kernel=saxpy --format=env)" && eval "$env"
//   ctxsel-cli select --kernel=saxpy --claim=5m [--wait=1m]   # CTXSEL_CLAIM
//   ctxsel-cli explain --kernel=saxpy --var=N=16
//
// --kernel, --construct and --var are common flags (common_flags.h), read
// the same way by `eval`. Exit codes: kExitOk placed, kExitFailure no
// placement (FAILED_PRECONDITION), kExitBadInput bad input or unknown kernel,
// kExitUnreachable server unreachable, kExitExhausted every fitting device
// claimed (after --wait).
#include "client/cli/select_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "agent/node_id.h"
#include "base/proto_time.h"
#include "base/status_macros.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/service_output.h"
#include "launch/launch_env.h"

ABSL_FLAG(std::string, policy, "least_loaded",
          "select/explain: least_loaded, spread or pack.");
ABSL_FLAG(std::vector<std::string>, nodes, {},
          "select/explain: only these nodes.");
ABSL_FLAG(int, top_k, 0,
          "select/explain: alternatives to show (0: server default).");
ABSL_FLAG(std::vector<std::string>, impl_vendor, {},
          "select/explain: implementation vendor traits, e.g. llvm.");
ABSL_FLAG(std::vector<std::string>, requires, {},
          "select/explain: implementation requires traits, e.g. "
          "unified_shared_memory.");
ABSL_FLAG(std::string, format, "table", "select: table, json or env.");
ABSL_FLAG(bool, here, false,
          "select/explain/run: only this node's devices (the node id "
          "ctxsel-agent reports as: the host name).");
ABSL_FLAG(absl::Duration, claim, absl::ZeroDuration(),
          "select/run: claim the chosen device for this long (e.g. 5m), so "
          "no other claiming launcher gets it; 0: no claim (run: 5m).");
ABSL_FLAG(std::string, holder, "",
          "select/run: who holds the claim (default: user@host:pid).");
ABSL_FLAG(absl::Duration, wait, absl::ZeroDuration(),
          "select/run: when every fitting device is claimed, retry for this "
          "long before giving up.");

namespace ctxsel::cli {
namespace {

// A policy by its proto enum name in lower case without the enum's prefix
// ("least_loaded" for POLICY_LEAST_LOADED): the spellings come from
// ctxsel.proto, so a new policy needs no CLI change.
constexpr absl::string_view kPolicyPrefix = "POLICY_";

absl::StatusOr<v1::Policy> ParsePolicy(const std::string& name) {
  v1::Policy policy = v1::POLICY_UNSPECIFIED;
  if (name == absl::AsciiStrToLower(name) &&
      v1::Policy_Parse(absl::StrCat(kPolicyPrefix, absl::AsciiStrToUpper(name)),
                       &policy) &&
      policy != v1::POLICY_UNSPECIFIED) {
    return policy;
  }
  std::vector<std::string> names;
  const google::protobuf::EnumDescriptor* policies = v1::Policy_descriptor();
  for (int i = 0; i < policies->value_count(); ++i) {
    if (policies->value(i)->number() == v1::POLICY_UNSPECIFIED) continue;
    names.push_back(absl::AsciiStrToLower(
        absl::StripPrefix(policies->value(i)->name(), kPolicyPrefix)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--policy: '", name, "' (expected ", absl::StrJoin(names, ", "), ")"));
}

}  // namespace

absl::StatusOr<v1::Job> JobFromFlags(bool read_variables) {
  v1::Job job;
  job.set_kernel(absl::GetFlag(FLAGS_kernel));
  if (job.kernel().empty())
    return absl::InvalidArgumentError("--kernel: missing");
  for (const std::string& name : ConstructNamesFromFlags()) {
    job.add_construct()->set_name(name);
  }
  if (read_variables) {
    CTXSEL_ASSIGN_OR_RETURN(JobVariables variables, JobVariablesFromFlags());
    for (const auto& [name, value] : variables) {
      (*job.mutable_variables())[name] = value;
    }
  }
  auto policy = ParsePolicy(absl::GetFlag(FLAGS_policy));
  if (!policy.ok()) return policy.status();
  job.set_policy(*policy);
  for (const std::string& n : absl::GetFlag(FLAGS_nodes)) job.add_nodes(n);
  if (absl::GetFlag(FLAGS_here)) {
    if (job.nodes_size() > 0) {
      return absl::InvalidArgumentError("--here: conflicts with --nodes");
    }
    job.add_nodes(agent::NodeId());
  }
  job.set_device_filter(absl::GetFlag(FLAGS_device_filter));
  job.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const std::string& v : absl::GetFlag(FLAGS_impl_vendor)) {
    job.mutable_implementation()->add_vendor(v);
  }
  for (const std::string& r : absl::GetFlag(FLAGS_requires)) {
    job.mutable_implementation()->add_requirements(r);
  }
  return job;
}

std::string DefaultHolder() {
  const char* user = std::getenv("USER");
  return absl::StrCat(user != nullptr && *user != '\0' ? user : "unknown", "@",
                      agent::NodeId(), ":", getpid());
}

absl::StatusOr<v1::SelectRequest> SelectRequestFromFlags() {
  v1::SelectRequest request;
  CTXSEL_ASSIGN_OR_RETURN(v1::Job job, JobFromFlags());
  *request.mutable_job() = std::move(job);
  const absl::Duration claim = absl::GetFlag(FLAGS_claim);
  if (claim < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--claim: negative");
  }
  if (claim > absl::ZeroDuration()) {
    *request.mutable_claim()->mutable_duration() = ToProtoDuration(claim);
    const std::string holder = absl::GetFlag(FLAGS_holder);
    request.mutable_claim()->set_holder(holder.empty() ? DefaultHolder()
                                                       : holder);
  }
  return request;
}

EnvVars LaunchEnv(const v1::SelectRequest& request,
                  const v1::SelectResponse& answer) {
  return launch::LaunchEnv(answer.placement(), request.job().kernel(),
                           answer.has_claim() ? answer.claim().id() : "");
}

absl::StatusOr<v1::SelectResponse> SelectWaiting(
    client::CtxselClient& client, const v1::SelectRequest& request,
    absl::Duration wait, const std::function<bool(absl::Duration)>& sleep) {
  const absl::Time deadline = absl::Now() + wait;
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    absl::StatusOr<v1::SelectResponse> answer = client.Select(request);
    if (answer.ok() || !absl::IsResourceExhausted(answer.status())) {
      return answer;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration() || !sleep(std::min(backoff, left))) {
      return answer;
    }
    backoff = std::min(2 * backoff, absl::Seconds(2));
  }
}

namespace {

// The short class name; -o wide: the full trait form.
std::string ChoiceRow(const v1::PlacementChoice& p) {
  const bool wide = OutputFormatFromFlags().value_or(OutputFormat::kTable) ==
                    OutputFormat::kWide;
  const std::string& device_class = wide || p.device_class_short_name().empty()
                                        ? p.device_class()
                                        : p.device_class_short_name();
  std::string row = absl::StrCat(
      p.base() ? "(base)" : p.variant(), " on ", p.device().id(), " [",
      device_class, "] score ", p.score(), p.dynamic() ? " (dynamic)" : "");
  if (p.runtime_only_variants_size() > 0) {
    absl::StrAppend(&row, "; runtime-only above it, the program decides: ",
                    absl::StrJoin(p.runtime_only_variants(), ", "));
  }
  return row;
}

int RunSelect(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kSelectCommand);
  auto request = SelectRequestFromFlags();
  if (!request.ok()) return ReportError("select", request.status());
  const std::string format =
      absl::GetFlag(FLAGS_json) ? "json" : absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json" && format != "env") {
    return BadUsage("select", "--format: expected table, json or env");
  }
  auto answer =
      SelectWaiting(*ConnectToServer(), *request, absl::GetFlag(FLAGS_wait));
  if (!answer.ok()) return ReportError("select", answer.status());
  if (format == "json") {
    std::printf("%s", ToJson(*answer).c_str());
  } else if (format == "env") {
    std::fputs(launch::ExportLines(LaunchEnv(*request, *answer)).c_str(),
               stdout);
  } else if (!PrintMessage(*answer)) {
    std::printf("%s\n", ChoiceRow(answer->placement()).c_str());
    if (answer->has_claim()) {
      std::printf("claim %s until %s\n", answer->claim().id().c_str(),
                  ExpiryText(answer->claim()).c_str());
    }
    for (const v1::PlacementChoice& alt : answer->alternatives()) {
      std::printf("  alternative: %s\n", ChoiceRow(alt).c_str());
    }
    std::printf("\n%s\n", answer->explanation().c_str());
  }
  return kExitOk;
}

int RunExplain(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kExplainCommand);
  auto job = JobFromFlags();
  if (!job.ok()) return ReportError("explain", job.status());
  auto report = ConnectToServer()->Explain(*job);
  if (!report.ok()) return ReportError("explain", report.status());
  if (!PrintMessage(*report)) {
    std::printf("%s\n", report->text().c_str());
  }
  return report->has_placement() ? kExitOk : kExitFailure;
}

}  // namespace

const Command kSelectCommand = {
    "select",
    "select " CTXSEL_CLI_JOB_FLAGS
    " [--claim=DURATION [--holder=WHO] [--wait=DURATION]]"
    " [--format=table|json|env] [--json]",
    "Pick variant, node and device for a job (--claim: and claim it).",
    RunSelect};
const Command kExplainCommand = {
    "explain", "explain " CTXSEL_CLI_JOB_FLAGS " [--json]",
    "Show the per-class, per-variant breakdown of a selection.", RunExplain};

}  // namespace ctxsel::cli
