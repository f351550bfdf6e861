// ctxsel-cli select / explain: ask the server where a job should run.
//
//   ctxsel-cli select --kernel=saxpy --construct=target,teams,parallel,for
//       --var=N=4096 [--policy=spread]
//       [--format=table|json|env|slurm|dotenv|sbatch]
//   env="$(ctxsel-cli select --kernel=saxpy --format=env)" && eval "$env"
//   ctxsel-cli select --kernel=saxpy --claim=5m [--wait=1m]   # CTXSEL_CLAIM
//   ctxsel-cli select --kernel=saxpy --from_allocation --count=2 --claim=5m
//   ctxsel-cli explain --kernel=saxpy --var=N=16
//
// --kernel, --construct and --var are common flags (common_flags.h), read
// the same way by `eval`. Exit codes are command.h's, by ExitCodeOf.
#include "client/cli/select_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "base/backoff.h"
#include "base/error_reasons.h"
#include "base/policy_names.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "client/cli/byte_size.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/launcher_env.h"
#include "client/cli/select_answer.h"
#include "client/cli/service_output.h"
#include "client/cli/text_fit.h"
#include "client/cli/wait_notice.h"
#include "devices/node_id.h"
#include "formats/gres_conf.h"
#include "images/binary_file.h"
#include "launch/env_format.h"
#include "selector/compiler_profile.h"

// The names come from base/policy.def (help text is read at run time).
ABSL_FLAG(std::string, policy, "least_loaded",
          absl::StrCat("select/explain: one of ",
                       absl::StrJoin(ctxsel::PolicyNames(), ", "), "."));
ABSL_FLAG(std::vector<std::string>, nodes, {},
          "select/explain: only these nodes.");
ABSL_FLAG(int, top_k, 0,
          "select/explain: alternatives to show (0: server default).");
ABSL_FLAG(std::vector<std::string>, impl_vendor, {},
          "select/explain: implementation vendor traits, e.g. llvm.");
ABSL_FLAG(std::vector<std::string>, requires, {},
          "select/explain: implementation requires traits, e.g. "
          "unified_shared_memory.");
ABSL_FLAG(std::string, format, "table",
          "select: table, json, env (export NAME='value', for eval), slurm "
          "(export NAME=value, for a TaskProlog), dotenv (NAME=value, for "
          "--env-file and EnvironmentFile) or sbatch (the --gres options "
          "that queue the job where its best variant runs).");
ABSL_FLAG(int, rank, -1,
          "select --format=env|slurm|dotenv with --count: whose environment "
          "to print (default: $SLURM_PROCID, $OMPI_COMM_WORLD_RANK or "
          "$PMI_RANK, else 0).");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "select/explain/run: only these devices (ids like n1/gpu0 or "
          "UUIDs): the launcher's allocation.");
ABSL_FLAG(bool, from_allocation, false,
          "select/explain/run: only the devices the launcher allocated, read "
          "from $SLURM_STEP_GPUS, $SLURM_JOB_GPUS, $CUDA_VISIBLE_DEVICES, "
          "$ROCR_VISIBLE_DEVICES, $HIP_VISIBLE_DEVICES or $ZE_AFFINITY_MASK "
          "(the first set) on the node of --nodes, else this host.");
ABSL_FLAG(int, count, 0,
          "select/explain/run: place the job on N distinct devices, all or "
          "none (0: 1).");
ABSL_FLAG(std::string, require, "",
          "select/explain/run: fail rather than place on a device without "
          "this kind, e.g. gpu.");
ABSL_FLAG(bool, require_variant, false,
          "select/explain/run: fail rather than place the kernel's base "
          "function.");
ABSL_FLAG(bool, same_node, false,
          "select/explain/run: with --count, every rank on one node.");
ABSL_FLAG(std::string, min_memory, "",
          "select/explain/run: only devices with at least this much memory, "
          "e.g. 60GiB (their class's capacity; a host CPU has none).");
ABSL_FLAG(int, min_compute_units, 0,
          "select/explain/run: only devices with at least this many compute "
          "units (SMs, CUs, EUs).");
ABSL_FLAG(
    std::string, binary, "",
    "select/explain/run: only devices that run one of the device "
    "images this executable or shared object carries (docs/binaries.md).");
ABSL_FLAG(bool, here, false,
          "select/explain/run: only this node's devices (the node id "
          "ctxsel-agent reports as: the host name).");
ABSL_FLAG(absl::Duration, claim, absl::ZeroDuration(),
          "select/run: claim the chosen device for this long (e.g. 5m), so "
          "no other claiming launcher gets it; 0: no claim (run: 5m).");
ABSL_FLAG(std::string, holder, "",
          "select/run: who holds the claim (default: slurm-$SLURM_JOB_ID."
          "$SLURM_STEP_ID in a Slurm step, else user@host:pid); claims "
          "release: whose claims to end.");
ABSL_FLAG(absl::Duration, wait, absl::ZeroDuration(),
          "select/run: when every fitting device is claimed, wait this long "
          "for one in the server's queue (FIFO within a priority; an older "
          "server: retry) before giving up.");
ABSL_FLAG(std::string, memory, "",
          "select/run: with --claim, claim this much of the device's memory "
          "(e.g. 20GiB) instead of the whole device.");
ABSL_FLAG(int, compute_percent, 0,
          "select/run: with --claim, claim this percentage (1-100) of the "
          "device's compute instead of the whole device.");
ABSL_FLAG(int, priority, 0,
          "select/run: with --wait, the priority in the server's queue, 0 "
          "to 9, higher first; above 0 for the admin role.");

namespace ctxsel::cli {
namespace {

// `status` with `prefix` before its message; code and details kept, so
// that ExitCodeOf still reads them.
absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  absl::Status out(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& p) {
    out.SetPayload(url, p);
  });
  return out;
}

// Job.allowed_devices from the launcher's environment (--from_allocation).
absl::Status AddAllocation(client::CtxselClient& client, v1::Job& job) {
  constexpr absl::string_view kFlag = "--from_allocation: ";
  absl::StatusOr<AllocationVariable> allocation = FindAllocation(ProcessGetenv);
  if (!allocation.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFlag, allocation.status().message()));
  }
  if (job.nodes_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFlag,
        "an allocation's indices are one node's; give --nodes=NODE "
        "or --here, not ",
        job.nodes_size(), " nodes"));
  }
  const std::string node = job.nodes_size() == 1 ? job.nodes(0) : NodeId();
  absl::StatusOr<std::vector<v1::Device>> devices =
      client.ListDevices("", node);
  if (!devices.ok()) {
    return Prefixed(devices.status(),
                    absl::StrCat(kFlag, "listing node ", node, "'s devices: "));
  }
  absl::StatusOr<std::vector<std::string>> allowed =
      AllowedDevices(*allocation, node, *devices);
  if (!allowed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFlag, allowed.status().message()));
  }
  if (job.nodes_size() == 0) job.add_nodes(node);
  for (const std::string& id : *allowed) job.add_allowed_devices(id);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Job> JobFromFlags(client::CtxselClient* client,
                                     bool read_variables) {
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
  auto policy = ParsePolicyName(absl::GetFlag(FLAGS_policy));
  if (!policy.ok()) return Prefixed(policy.status(), "--policy: ");
  job.set_policy(*policy);
  for (const std::string& n : absl::GetFlag(FLAGS_nodes)) job.add_nodes(n);
  if (absl::GetFlag(FLAGS_here)) {
    if (job.nodes_size() > 0) {
      return absl::InvalidArgumentError("--here: conflicts with --nodes");
    }
    job.add_nodes(NodeId());
  }
  job.set_device_filter(absl::GetFlag(FLAGS_device_filter));
  job.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const std::string& v : absl::GetFlag(FLAGS_impl_vendor)) {
    job.mutable_implementation()->add_vendor(v);
  }
  for (const std::string& r : absl::GetFlag(FLAGS_requires)) {
    job.mutable_implementation()->add_requirements(r);
  }
  if (absl::GetFlag(FLAGS_count) < 0) {
    return absl::InvalidArgumentError("--count: negative");
  }
  job.set_count(absl::GetFlag(FLAGS_count));
  job.set_required_kind(absl::GetFlag(FLAGS_require));
  job.set_require_variant(absl::GetFlag(FLAGS_require_variant));
  if (absl::GetFlag(FLAGS_same_node) && job.count() <= 1) {
    return absl::InvalidArgumentError(
        "--same_node: only with --count=N, N > 1");
  }
  job.set_same_node(absl::GetFlag(FLAGS_same_node));
  if (const std::string min = absl::GetFlag(FLAGS_min_memory); !min.empty()) {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(min);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--min_memory: ", bytes.status().message()));
    }
    job.set_min_memory_bytes(*bytes);
  }
  if (absl::GetFlag(FLAGS_min_compute_units) < 0) {
    return absl::InvalidArgumentError("--min_compute_units: negative");
  }
  job.set_min_compute_units(absl::GetFlag(FLAGS_min_compute_units));
  if (const std::string compiler = absl::GetFlag(FLAGS_compiler);
      !compiler.empty()) {
    if (absl::Status s = selector::CompilerProfileFromName(compiler).status();
        !s.ok()) {
      return Prefixed(s, "--compiler: ");
    }
    job.set_compiler(compiler);
  }
  absl::StatusOr<selector::TieChoice> ties =
      selector::TieChoiceFromName(absl::GetFlag(FLAGS_ties));
  if (!ties.ok()) return Prefixed(ties.status(), "--ties: ");
  job.set_ties(*ties == selector::TieChoice::kFirstDeclared
                   ? v1::TIE_BREAK_FIRST_DECLARED
               : *ties == selector::TieChoice::kLastDeclared
                   ? v1::TIE_BREAK_LAST_DECLARED
                   : v1::TIE_BREAK_UNSPECIFIED);
  if (const std::string binary = absl::GetFlag(FLAGS_binary); !binary.empty()) {
    absl::StatusOr<std::vector<std::string>> ids = images::ReadImageIds(binary);
    if (!ids.ok()) return Prefixed(ids.status(), "--binary: ");
    for (std::string& id : *ids) job.add_images(std::move(id));
  }
  for (const std::string& d : absl::GetFlag(FLAGS_devices)) {
    job.add_allowed_devices(d);
  }
  if (absl::GetFlag(FLAGS_from_allocation)) {
    if (job.allowed_devices_size() > 0) {
      return absl::InvalidArgumentError(
          "--from_allocation: conflicts with --devices");
    }
    if (client == nullptr) {
      return absl::InvalidArgumentError("--from_allocation: not taken here");
    }
    // Last: the flags above are checked before anything is asked.
    CTXSEL_RETURN_IF_ERROR(AddAllocation(*client, job));
  }
  return job;
}

std::string DefaultHolder() {
  if (std::string slurm = SlurmHolder(ProcessGetenv); !slurm.empty()) {
    return slurm;
  }
  const char* user = std::getenv("USER");
  return absl::StrCat(user != nullptr && *user != '\0' ? user : "unknown", "@",
                      NodeId(), ":", getpid());
}

absl::StatusOr<v1::SelectRequest> SelectRequestFromFlags(
    client::CtxselClient* client, absl::Duration default_claim) {
  absl::Duration claim = absl::GetFlag(FLAGS_claim);
  if (claim < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--claim: negative");
  }
  if (claim == absl::ZeroDuration()) claim = default_claim;
  const std::string holder = absl::GetFlag(FLAGS_holder);
  if (claim == absl::ZeroDuration() && !holder.empty()) {
    return absl::InvalidArgumentError(
        "--holder: names who holds a claim; add --claim=DURATION");
  }
  v1::SelectRequest request;
  CTXSEL_ASSIGN_OR_RETURN(v1::Job job, JobFromFlags(client));
  *request.mutable_job() = std::move(job);
  if (claim > absl::ZeroDuration()) {
    *request.mutable_claim()->mutable_duration() = ToProtoDuration(claim);
    request.mutable_claim()->set_holder(holder.empty() ? DefaultHolder()
                                                       : holder);
    request.mutable_claim()->set_priority(absl::GetFlag(FLAGS_priority));
  }
  const std::string memory = absl::GetFlag(FLAGS_memory);
  const int percent = absl::GetFlag(FLAGS_compute_percent);
  if ((!memory.empty() || percent != 0) && !request.has_claim()) {
    return absl::InvalidArgumentError(
        "--memory, --compute_percent: a share of a claim; add "
        "--claim=DURATION");
  }
  if (!memory.empty()) {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(memory);
    if (!bytes.ok() || *bytes == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--memory: ", bytes.ok() ? "must be more than 0"
                                                : bytes.status().message()));
    }
    request.mutable_claim()->set_memory_bytes(*bytes);
  }
  if (percent < 0 || percent > 100) {
    return absl::InvalidArgumentError("--compute_percent: not in 0..100");
  }
  if (percent > 0) request.mutable_claim()->set_compute_percent(percent);
  return request;
}

absl::StatusOr<v1::SelectResponse> SelectWaiting(
    client::CtxselClient& client, const v1::SelectRequest& request,
    absl::Duration wait, const std::function<bool(absl::Duration)>& sleep) {
  const absl::Time deadline = absl::Now() + wait;
  WaitNotice notice(request, deadline);
  Backoff backoff({absl::Milliseconds(100), absl::Seconds(2)});
  // The server's queue first; a server older than ClaimRequest.wait answers
  // at once with neither of the queue's reasons, and we retry on our own.
  bool queued = wait > absl::ZeroDuration() && request.has_claim();
  while (true) {
    absl::StatusOr<v1::SelectResponse> answer;
    if (queued) {
      v1::SelectRequest waiting = request;
      *waiting.mutable_claim()->mutable_wait() = ToProtoDuration(wait);
      // A claim granted at once says nothing; one still queued after a
      // second says what it waits for (the server's queue answers only
      // when it ends).
      const absl::Time asked = absl::Now();
      const absl::Status in_queue = absl::ResourceExhaustedError(
          "every fitting device is claimed; waiting in the server's queue");
      answer = client.SelectQueued(waiting, [&] {
        if (absl::Now() - asked >= absl::Seconds(1)) notice.Waiting(in_queue);
        return sleep(absl::Milliseconds(1));
      });
      queued = false;
      if (!answer.ok() && ExitCodeOf(answer.status()) == kExitExhausted) {
        const std::optional<google::rpc::ErrorInfo> info =
            GetDetail<google::rpc::ErrorInfo>(answer.status());
        const std::string reason = info.has_value() ? info->reason() : "";
        if (reason == kReasonClaimWaitExpired ||
            reason == kReasonClaimQueueFull ||
            reason == kReasonClaimQuotaExceeded) {
          return answer;
        }
      }
    } else {
      answer = client.Select(request);
    }
    if (answer.ok()) {
      absl::Status terms = CheckTerms(request, *answer);
      if (terms.ok()) return answer;
      for (int r = 0; r < RankCount(*answer); ++r) {
        const std::string& id = RankClaim(*answer, r).id();
        if (!id.empty()) client.ReleaseClaim(id).IgnoreError();
      }
      return terms;
    }
    // Only claimed devices are worth waiting for (not a rate limit, nor
    // one's own quota, which only one's own releases lift).
    if (ExitCodeOf(answer.status()) != kExitExhausted) return answer;
    if (const std::optional<google::rpc::ErrorInfo> info =
            GetDetail<google::rpc::ErrorInfo>(answer.status());
        info.has_value() && info->reason() == kReasonClaimQuotaExceeded) {
      return answer;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return answer;
    notice.Waiting(answer.status());
    if (!sleep(std::min(backoff.Next(), left))) return answer;
  }
}

namespace {

// The short class name; -o wide: the full trait form.
std::string ChoiceRow(const v1::PlacementChoice& p) {
  const std::string& device_class =
      WideOutput() || p.device_class_short_name().empty()
          ? p.device_class()
          : p.device_class_short_name();
  std::string row = absl::StrCat(
      p.base() ? "(base)" : p.variant(), " on ", p.device().id(), " [",
      device_class, "] score ", p.score(), p.dynamic() ? " (dynamic)" : "");
  if (!p.image().empty()) absl::StrAppend(&row, " image ", p.image());
  if (p.runtime_only_variants_size() > 0) {
    absl::StrAppend(&row, "; runtime-only above it, the program decides: ",
                    absl::StrJoin(p.runtime_only_variants(), ", "));
  }
  return row;
}

// The rank whose environment select prints: --rank, else the launcher's
// rank of this process when the job has several, else 0.
absl::StatusOr<int> RankToPrint(const v1::Job& job) {
  const int count = std::max(job.count(), 1);
  int rank = absl::GetFlag(FLAGS_rank);
  std::string from = "--rank";
  if (rank == -1) {
    rank = 0;
    if (count > 1) {
      CTXSEL_ASSIGN_OR_RETURN(std::optional<int> launcher,
                              RankFromEnvironment(ProcessGetenv));
      rank = launcher.value_or(0);
      from =
          "the launcher's rank (SLURM_PROCID, OMPI_COMM_WORLD_RANK or "
          "PMI_RANK)";
    }
  }
  if (rank < 0 || rank >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat(from, ": ", rank, " is not a rank of --count=", count,
                     " (0..", count - 1, ")"));
  }
  return rank;
}

void PrintAnswer(const v1::SelectResponse& answer) {
  const bool several = RankCount(answer) > 1;
  for (int r = 0; r < RankCount(answer); ++r) {
    PrintFitted(stdout,
                absl::StrCat(several ? absl::StrCat("rank ", r, ": ") : "",
                             ChoiceRow(RankPlacement(answer, r))));
    const v1::Claim& claim = RankClaim(answer, r);
    if (!claim.id().empty()) {
      std::printf("%sclaim %s until %s\n", several ? "  " : "",
                  claim.id().c_str(), ExpiryText(claim).c_str());
    }
  }
  for (const v1::PlacementChoice& alt : answer.alternatives()) {
    PrintFitted(stdout, absl::StrCat("  alternative: ", ChoiceRow(alt)));
  }
  std::printf("\n");
  PrintFitted(stdout, answer.explanation());
}

int RunSelect(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kSelectCommand);
  const std::string format =
      absl::GetFlag(FLAGS_json) ? "json" : absl::GetFlag(FLAGS_format);
  std::optional<launch::EnvFormat> env_format;
  if (format == "sbatch") {
    if (absl::GetFlag(FLAGS_claim) > absl::ZeroDuration()) {
      return BadUsage("select",
                      "--format=sbatch: asks before queueing, so no --claim");
    }
  } else if (format != "table" && format != "json") {
    absl::StatusOr<launch::EnvFormat> parsed = launch::ParseEnvFormat(format);
    if (!parsed.ok()) {
      return BadUsage(
          "select",
          "--format: expected table, json, env, slurm, dotenv or sbatch");
    }
    env_format = *parsed;
  } else if (absl::GetFlag(FLAGS_rank) != -1) {
    return BadUsage("select",
                    "--rank: only with --format=env, slurm or dotenv");
  }
  auto client = ConnectToServer();
  auto request = SelectRequestFromFlags(client.get(), absl::ZeroDuration());
  if (!request.ok()) return ReportError("select", request.status());
  // Only the table prints the explanation, and json shows the whole answer.
  if (env_format.has_value() || format == "sbatch") {
    request->set_omit_explanation(true);
  }
  std::optional<int> rank;
  if (env_format.has_value()) {
    absl::StatusOr<int> r = RankToPrint(request->job());
    if (!r.ok()) return ReportError("select", r.status());
    rank = *r;
  }
  auto answer = SelectWaiting(*client, *request, absl::GetFlag(FLAGS_wait));
  if (!answer.ok()) return ReportError("select", answer.status());
  if (std::string note = FallbackNote(*request, *answer, rank); !note.empty()) {
    std::fprintf(stderr, "ctxsel-cli: note: %s\n", note.c_str());
  }
  if (env_format.has_value()) {
    absl::StatusOr<std::string> text =
        launch::FormatEnv(RankEnv(*request, *answer, *rank), *env_format);
    // Printed whole or not at all: a launcher must not apply half of it.
    if (!text.ok()) return ReportError("select --format", text.status());
    std::fputs(text->c_str(), stdout);
  } else if (format == "sbatch") {
    // Where the best variant runs, as sbatch/srun options: Slurm then
    // queues the job for nodes with those GPUs (their gres.conf written by
    // `ctxsel-cli slurm gres-conf`, so the types agree).
    std::vector<v1::PlacementChoice> ranks;
    for (const v1::RankPlacement& r : answer->ranks()) {
      ranks.push_back(r.placement());
    }
    if (ranks.empty()) ranks.push_back(answer->placement());
    std::printf("%s\n", slurm::SubmitOptions(ranks).c_str());
  } else if (format == "json") {
    std::printf("%s", ToJson(*answer).c_str());
  } else if (!PrintMessage(*answer)) {
    PrintAnswer(*answer);
  }
  return kExitOk;
}

// -o wide: each short name the text uses with the full trait form it
// stands for (short names need not be unique).
void PrintClassNames(const v1::ExplainResponse& report) {
  std::vector<std::vector<std::string>> rows = {{"SHORT NAME", "CLASS"}};
  std::set<std::pair<std::string, std::string>> seen;
  for (const v1::DeviceClassReport& c : report.classes()) {
    if (seen.emplace(c.device_class_short_name(), c.device_class()).second) {
      rows.push_back({c.device_class_short_name(), c.device_class()});
    }
  }
  std::printf("\n");
  PrintTable(rows);
}

int RunExplain(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kExplainCommand);
  auto client = ConnectToServer();
  auto job = JobFromFlags(client.get());
  if (!job.ok()) return ReportError("explain", job.status());
  auto report = client->Explain(*job);
  if (!report.ok()) return ReportError("explain", report.status());
  if (!PrintMessage(*report)) {
    PrintFitted(stdout, report->text());
    if (WideOutput()) PrintClassNames(*report);
  }
  return report->has_placement() ? kExitOk : kExitFailure;
}

}  // namespace

const Command kSelectCommand = {
    "select",
    "select " CTXSEL_CLI_JOB_FLAGS
    " [--claim=DURATION [--holder=WHO] [--wait=DURATION [--priority=N]]"
    " [--memory=SIZE] [--compute_percent=N]]"
    " [--format=table|json|env|slurm|dotenv|sbatch [--rank=N]] [--json]",
    "Pick variant, node and device for a job (--claim: and claim it).",
    RunSelect};
const Command kExplainCommand = {
    "explain", "explain " CTXSEL_CLI_JOB_FLAGS " [--json]",
    "Show the per-class, per-variant breakdown of a selection.", RunExplain};

}  // namespace ctxsel::cli
