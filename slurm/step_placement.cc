#include "slurm/step_placement.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/proto_time.h"
#include "client/cli/command.h"
#include "client/cli/service_output.h"

namespace ctxsel::slurm {
namespace {

// Where the step's devices come from, for messages: "SLURM_STEP_GPUS=0,1",
// or "no GPU" for a step without one.
struct Allocation {
  std::vector<std::string> allowed;  // Job.allowed_devices
  std::string described;
  bool claim = false;
};

// "ctxsel: rank 2 of slurm-42.0: <why>".
absl::Status TaskError(const StepRequest& request, int rank,
                       absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("ctxsel: rank ", rank, " of ", request.holder, ": ", why));
}

// The one line for a failed call, by what the site or user should do
// (the exit-code classes of ctxsel-cli, client/cli/command.h).
std::string Why(const StepRequest& request, const Allocation& allocation,
                const absl::Status& status) {
  // One line: the code and the message, not the details ErrorText adds.
  const std::string message =
      absl::StrReplaceAll(absl::StrCat(absl::StatusCodeToString(status.code()),
                                       ": ", status.message()),
                          {{"\n", " "}});
  switch (cli::ExitCodeOf(status)) {
    case cli::kExitExhausted:
      return absl::StrCat("every device of the step's allocation (",
                          allocation.described, ") that fits ",
                          request.job.kernel(), " is claimed: ", message);
    case cli::kExitFailure:
      return absl::StrCat("no device of the step's allocation (",
                          allocation.described, ") fits ", request.job.kernel(),
                          ": ", message);
    case cli::kExitUnreachable:
      return absl::StrCat("ctxsel server ", request.server,
                          " did not answer (server=, timeout= in "
                          "plugstack.conf): ",
                          message);
    case cli::kExitCredentials:
      return absl::StrCat("ctxsel server ", request.server,
                          " refused the plugin's credentials (token_file=, "
                          "ca= in plugstack.conf): ",
                          message);
    default:
      return absl::StrCat("ctxsel server ", request.server,
                          " refused the job: ", message);
  }
}

// True when the failure is about devices (none free, none fits): what
// fallback=base covers. Anything else fails the task whatever the site says.
bool NoPlacement(const absl::Status& status) {
  const int code = cli::ExitCodeOf(status);
  return code == cli::kExitExhausted || code == cli::kExitFailure;
}

const v1::Device* HostDevice(const std::vector<v1::Device>& devices) {
  for (const v1::Device& d : devices) {
    if (d.index() == -1) return &d;
  }
  return nullptr;
}

absl::StatusOr<Allocation> StepAllocation(
    const StepRequest& request, const std::vector<v1::Device>& devices,
    const cli::Getenv& step_env) {
  Allocation allocation;
  absl::StatusOr<cli::AllocationVariable> variable =
      cli::FindAllocation(step_env);
  if (variable.ok()) {
    allocation.described = absl::StrCat(variable->name, "=", variable->value);
    absl::StatusOr<std::vector<std::string>> allowed =
        cli::AllowedDevices(*variable, request.node, devices);
    if (!allowed.ok()) return allowed.status();
    allocation.allowed = *std::move(allowed);
    allocation.claim = true;
    return allocation;
  }
  const v1::Device* host = HostDevice(devices);
  if (host == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the step has no GPU and ctxsel knows no host CPU of node ",
        request.node));
  }
  allocation.described = absl::StrCat("no GPU: host CPU ", host->id());
  allocation.allowed = {host->id()};
  return allocation;
}

// The base function on the host CPU, pinned by the same rule the server
// uses for its answers (launch/launch_env.h).
absl::StatusOr<launch::LaunchEnvironment> BaseEnvironment(
    const StepRequest& request, const std::vector<v1::Device>& devices) {
  const v1::Device* host = HostDevice(devices);
  if (host == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fallback=base: ctxsel knows no host CPU of node ", request.node));
  }
  v1::PlacementChoice base;
  base.set_base(true);
  base.set_node(request.node);
  *base.mutable_device() = *host;
  return launch::LaunchEnv(base, request.job.kernel());
}

launch::LaunchEnvironment EnvironmentOf(const v1::SelectResponse& response) {
  launch::LaunchEnvironment env;
  if (response.ranks().empty()) return env;
  for (const v1::EnvironmentVariable& v : response.ranks(0).environment()) {
    env.emplace_back(v.name(), v.value());
  }
  return env;
}

}  // namespace

std::vector<TaskPlacement> FailStep(const StepRequest& request,
                                    absl::string_view why) {
  std::vector<TaskPlacement> tasks;
  for (int rank : request.ranks) {
    TaskPlacement& task = tasks.emplace_back();
    task.rank = rank;
    task.status = TaskError(request, rank, why);
  }
  return tasks;
}

std::vector<TaskPlacement> PlaceStep(client::CtxselClient& client,
                                     const StepRequest& request,
                                     const cli::Getenv& step_env) {
  std::vector<TaskPlacement> tasks;
  for (int rank : request.ranks) tasks.emplace_back().rank = rank;
  // A failure before or beside the per-rank answers: every task not yet
  // placed fails with it.
  auto fail_from = [&](size_t first, absl::string_view why) {
    for (size_t i = first; i < tasks.size(); ++i) {
      tasks[i].status = TaskError(request, tasks[i].rank, why);
    }
    return tasks;
  };

  Allocation unknown{{}, "not read yet", false};
  absl::StatusOr<std::vector<v1::Device>> devices =
      client.ListDevices("", request.node);
  if (!devices.ok())
    return fail_from(0, Why(request, unknown, devices.status()));
  if (devices->empty()) {
    return fail_from(0, absl::StrCat("ctxsel server ", request.server,
                                     " knows no device of node ", request.node,
                                     " (is ctxsel-agent running there?)"));
  }
  absl::StatusOr<Allocation> allocation =
      StepAllocation(request, *devices, step_env);
  if (!allocation.ok()) return fail_from(0, allocation.status().message());

  v1::SelectRequest select;
  *select.mutable_job() = request.job;
  select.mutable_job()->add_nodes(request.node);
  for (const std::string& id : allocation->allowed) {
    select.mutable_job()->add_allowed_devices(id);
  }
  if (allocation->claim) {
    select.mutable_claim()->set_holder(request.holder);
    *select.mutable_claim()->mutable_duration() =
        ToProtoDuration(request.claim);
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskPlacement& task = tasks[i];
    absl::StatusOr<v1::SelectResponse> response = client.Select(select);
    if (response.ok()) {
      task.environment = EnvironmentOf(*response);
      task.claim_id = response->claim().id();
      continue;
    }
    const std::string why = Why(request, *allocation, response.status());
    if (!NoPlacement(response.status())) return fail_from(i, why);
    if (request.fallback == Fallback::kFail) {
      task.status = TaskError(request, task.rank, why);
      continue;
    }
    absl::StatusOr<launch::LaunchEnvironment> base =
        BaseEnvironment(request, *devices);
    if (!base.ok()) {
      task.status = TaskError(request, task.rank,
                              absl::StrCat(why, "; ", base.status().message()));
      continue;
    }
    task.environment = *std::move(base);
    task.note = absl::StrCat("ctxsel: rank ", task.rank, " of ", request.holder,
                             ": ", why, "; running the base function of ",
                             request.job.kernel(),
                             " on the host CPU "
                             "(fallback=base)");
  }
  return tasks;
}

}  // namespace ctxsel::slurm
