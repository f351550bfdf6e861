// step_placement.h: where each task of one Slurm job step runs on one node,
// decided before the tasks start (the SPANK plugin's core, without Slurm).
//
//   StepRequest request;
//   request.job = *JobFor(options);           // kernel, construct, variables
//   request.node = NodeId();           // the agent's id of this node
//   request.holder = "slurm-42.0";
//   request.ranks = {0, 1};                   // this node's tasks
//   std::vector<TaskPlacement> tasks =
//       PlaceStep(client, request, step_getenv);
//   // tasks[1].environment: {CTXSEL_VARIANT, saxpy_sm90}, ...,
//   //                       {CUDA_VISIBLE_DEVICES, GPU-...}
//
// Each rank is placed within the step's allocation (SLURM_STEP_GPUS and the
// other variables of cli::kAllocationVariables, mapped to this node's
// devices by vendor index), with its own claim held by `holder`: the claims
// keep two ranks off one device. Ranks are placed in the order given, so
// with more ranks than free devices the last ones get none. A step given
// no GPU runs on this node's host CPU, unclaimed (its CPUs are Slurm's to
// share out).
#ifndef CTXSEL_SLURM_STEP_PLACEMENT_H_
#define CTXSEL_SLURM_STEP_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/cli/launcher_env.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "launch/launch_env.h"
#include "slurm/plugin_config.h"

namespace ctxsel::slurm {

struct StepRequest {
  v1::Job job;             // what JobFor() gives; allowed_devices is set here
  std::string node;        // this node's ctxsel id
  std::string holder;      // "slurm-<job>.<step>"
  std::string server;      // for messages: what plugstack.conf's server= says
  std::vector<int> ranks;  // global task ids of this node's tasks
  Fallback fallback = Fallback::kFail;
  absl::Duration claim = absl::Minutes(10);
};

// One task's answer.
struct TaskPlacement {
  int rank = 0;
  // Not OK: the task must not start; the message is the one line for the
  // job's stderr ("ctxsel: rank 2 of slurm-42.0: ...").
  absl::Status status;
  // The variables to set in the task, in order, values as they are.
  launch::LaunchEnvironment environment;
  // The claim this task holds; "" when none.
  std::string claim_id;
  // A line for the job's stderr although the task runs: why it runs the
  // base function (fallback=base); "" otherwise.
  std::string note;
};

// One TaskPlacement per request.ranks, in that order. `step_env` reads the
// step's environment (the allocation variables). A failure that is not
// about devices (the server unreachable, credentials refused, an unknown
// kernel, an allocation that names no device of this node) fails every
// rank it reaches with the same line; the calls stop there.
std::vector<TaskPlacement> PlaceStep(client::CtxselClient& client,
                                     const StepRequest& request,
                                     const cli::Getenv& step_env);

// Every rank of `request` failed with `why`, in PlaceStep's words, for a
// step that cannot ask the server (a bad plugstack.conf, unreadable
// credentials).
std::vector<TaskPlacement> FailStep(const StepRequest& request,
                                    absl::string_view why);

}  // namespace ctxsel::slurm

#endif  // CTXSEL_SLURM_STEP_PLACEMENT_H_
