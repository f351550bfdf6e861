// ctxsel_spank.so: a SPANK plugin that places each task of a Slurm step on a
// device of the step's allocation and pins it there (docs/launchers.md,
// "Slurm"). A site enables it with one plugstack.conf line:
//
//   required /usr/lib/ctxsel/ctxsel_spank.so server=ctxsel:7070
//   ca=/etc/ctxsel/ca.pem token_file=/etc/ctxsel/slurm.token
//
// and a job asks for it with options of srun, sbatch and salloc:
//
//   srun --gres=gpu:2 -n2 --ctxsel-kernel=saxpy
//       --ctxsel-construct=target,teams,parallel,for --ctxsel-var=N=4096 ./app
//
// Where each SPANK callback runs and what it does here:
//   slurm_spank_init            everywhere but slurmd: registers the options;
//                               in slurmstepd, parses plugstack.conf's args.
//   slurm_spank_init_post_opt   srun/sbatch: rejects options without a
//                               kernel; slurmstepd (root): reads ca= and
//                               token_file=, before privileges drop.
//   slurm_spank_user_init       slurmstepd, once per step and node, before
//                               the tasks fork: selects and claims for every
//                               local task, in rank order (PlaceStep).
//   slurm_spank_task_init       each task, just before exec: sets its
//                               environment, or fails it with one line.
//   slurm_spank_task_exit       slurmstepd, as each task ends (SIGKILL too):
//                               releases its claim.
//   slurm_spank_exit            slurmstepd, at the step's end: releases every
//                               claim of the step's holder.
// The batch step (the job script) and steps without --ctxsel-* options are
// left alone.
//
// Only the slurm_spank_* callbacks and the plugin_* names are exported
// (exports.lds): every other symbol stays inside, so nothing of ctxsel's
// binds to srun's or slurmstepd's globals, nor theirs to ours.

extern "C" {
#include <slurm/spank.h>
}
#include <pthread.h>
#include <signal.h>
#include <slurm/slurm.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/channel_credentials.h"
#include "base/server_target.h"
#include "client/cli/launcher_env.h"
#include "client/ctxsel_client.h"
#include "devices/node_id.h"
#include "slurm/claim_renewer.h"
#include "slurm/plugin_config.h"
#include "slurm/step_placement.h"

extern "C" {
// SPANK_PLUGIN defines these as const, which in C++ alone would make them
// internal; declared extern first, Slurm's loader finds them.
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(ctxsel, 1)
}

namespace ctxsel::slurm {
namespace {

// One process's state: srun or sbatch (options only), or one slurmstepd
// (one step on one node). Never destroyed: slurmstepd exits with gRPC's
// threads still running.
struct Plugin {
  absl::StatusOr<PluginConfig> config =
      absl::FailedPreconditionError("plugstack.conf not read");
  JobOptions options;
  absl::Status option_error;  // a bad --ctxsel-* value, seen in slurmstepd
  bool active = false;        // this slurmstepd places its tasks
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      absl::FailedPreconditionError("credentials not read");
  std::string holder;
  std::unique_ptr<client::CtxselClient> client;
  std::map<int, TaskPlacement> tasks;  // by rank
  std::unique_ptr<ClaimRenewer> renewer;
};

Plugin& State() {
  static Plugin* const plugin = new Plugin;
  return *plugin;
}

// gRPC's threads start inside calls into it and inherit the caller's signal
// mask: blocked, slurmstepd's signals (SIGTERM of scancel, SIGCHLD) go to
// its own threads, never to ours.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

 private:
  sigset_t saved_;
};

int OnOption(int val, const char* optarg, int remote);

char* Text(const char* text) { return const_cast<char*>(text); }

spank_option kOptions[] = {
    {Text("ctxsel-kernel"), Text("K"),
     Text("ctxsel: run each task where kernel K's best variant runs, on a "
          "device of the step's allocation (docs/launchers.md)"),
     1, static_cast<int>(JobOption::kKernel), OnOption},
    {Text("ctxsel-construct"), Text("a,b,..."),
     Text("ctxsel: the kernel's OpenMP construct context, e.g. "
          "target,teams,parallel,for"),
     1, static_cast<int>(JobOption::kConstruct), OnOption},
    {Text("ctxsel-var"), Text("N=V,..."),
     Text("ctxsel: the job's variables, all in one comma list (Slurm keeps "
          "the last --ctxsel-var)"),
     1, static_cast<int>(JobOption::kVariables), OnOption},
};

int OnOption(int val, const char* optarg, int remote) {
  absl::Status set =
      SetJobOption(static_cast<JobOption>(val), optarg == nullptr ? "" : optarg,
                   State().options);
  if (set.ok()) return 0;
  if (remote) {
    State().option_error = set;  // told to the task, which fails
    return 0;
  }
  slurm_error("ctxsel: %s", std::string(set.message()).c_str());
  return -1;
}

template <typename T>
bool Item(spank_t sp, spank_item_t item, T* out) {
  return spank_get_item(sp, item, out) == ESPANK_SUCCESS;
}

// The step's environment as cli::Getenv reads it, copied out of slurmstepd
// (spank_getenv) for the allocation variables.
class StepEnvironment {
 public:
  explicit StepEnvironment(spank_t sp) {
    for (const char* name : cli::kAllocationVariables) {
      char value[4096];
      if (spank_getenv(sp, name, value, sizeof(value)) == ESPANK_SUCCESS) {
        values_[name] = value;
      }
    }
  }
  cli::Getenv Getenv() const {
    return [this](const char* name) -> const char* {
      auto it = values_.find(name);
      return it == values_.end() ? nullptr : it->second.c_str();
    };
  }

 private:
  std::map<std::string, std::string> values_;
};

StepRequest RequestFor(spank_t sp, const Plugin& plugin) {
  StepRequest request;
  uint32_t job = 0, step = 0, local_tasks = 0;
  Item(sp, S_JOB_ID, &job);
  Item(sp, S_JOB_STEPID, &step);
  const std::string job_id = std::to_string(job);
  const std::string step_id = std::to_string(step);
  request.holder = cli::SlurmHolder([&](const char* name) -> const char* {
    if (std::string(name) == "SLURM_JOB_ID") return job_id.c_str();
    if (std::string(name) == "SLURM_STEP_ID") return step_id.c_str();
    return nullptr;
  });
  Item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
  for (uint32_t local = 0; local < local_tasks; ++local) {
    uint32_t global = local;
    spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, local, &global);
    request.ranks.push_back(static_cast<int>(global));
  }
  std::sort(request.ranks.begin(), request.ranks.end());
  request.node = NodeId();
  if (plugin.config.ok()) {
    request.server = plugin.config->server;
    request.fallback = plugin.config->fallback;
    request.claim = plugin.config->claim;
  }
  return request;
}

// Why the step cannot ask the server at all; OK when it can.
absl::Status SetupError(const Plugin& plugin) {
  if (!plugin.config.ok()) return plugin.config.status();
  if (!plugin.option_error.ok()) return plugin.option_error;
  if (!plugin.credentials.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plugstack.conf: ", plugin.credentials.status().message()));
  }
  return JobFor(plugin.options).status();
}

}  // namespace
}  // namespace ctxsel::slurm

using ctxsel::slurm::Plugin;
using ctxsel::slurm::State;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  const spank_context_t context = spank_context();
  if (context != S_CTX_LOCAL && context != S_CTX_REMOTE &&
      context != S_CTX_ALLOCATOR) {
    return 0;
  }
  for (spank_option& option : ctxsel::slurm::kOptions) {
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      slurm_error("ctxsel: cannot register --%s", option.name);
      return -1;
    }
  }
  if (context == S_CTX_REMOTE) {
    State().config =
        ctxsel::slurm::ParsePluginArgs(std::vector<std::string>(av, av + ac));
  }
  return 0;
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) {
  Plugin& plugin = State();
  if (!ctxsel::slurm::Requested(plugin.options)) return 0;
  if (!spank_remote(sp)) {
    // srun, sbatch, salloc: a job without a kernel is refused at once.
    absl::Status job = ctxsel::slurm::JobFor(plugin.options).status();
    if (job.ok()) return 0;
    slurm_error("ctxsel: %s", std::string(job.message()).c_str());
    return -1;
  }
  uint32_t step = 0;
  if (!ctxsel::slurm::Item(sp, S_JOB_STEPID, &step) ||
      step > SLURM_MAX_NORMAL_STEP_ID) {
    return 0;  // the batch script (SLURM_BATCH_SCRIPT), extern, interactive
  }
  plugin.active = true;
  if (plugin.config.ok()) {
    // Still root here: token_file= may be readable by root alone.
    ctxsel::slurm::SignalsBlocked blocked;
    plugin.credentials =
        ctxsel::MakeChannelCredentials(plugin.config->security);
  }
  return 0;
}

extern "C" int slurm_spank_user_init(spank_t sp, int ac, char** av) {
  Plugin& plugin = State();
  if (!plugin.active) return 0;
  ctxsel::slurm::StepRequest request = ctxsel::slurm::RequestFor(sp, plugin);
  plugin.holder = request.holder;
  std::vector<ctxsel::slurm::TaskPlacement> tasks;
  if (absl::Status setup = ctxsel::slurm::SetupError(plugin); !setup.ok()) {
    tasks = ctxsel::slurm::FailStep(request, setup.message());
  } else {
    request.job = *ctxsel::slurm::JobFor(plugin.options);
    ctxsel::slurm::SignalsBlocked blocked;
    plugin.client = std::make_unique<ctxsel::client::CtxselClient>(
        ctxsel::ServerChannels(plugin.config->server, *plugin.credentials),
        absl::ToChronoMilliseconds(plugin.config->timeout));
    ctxsel::slurm::StepEnvironment env(sp);
    tasks = ctxsel::slurm::PlaceStep(*plugin.client, request, env.Getenv());
    plugin.renewer = std::make_unique<ctxsel::slurm::ClaimRenewer>(
        *plugin.client, plugin.config->claim,
        [](const std::string& id, const absl::Status& status) {
          slurm_error("ctxsel: renewing claim %s: %s", id.c_str(),
                      status.ToString().c_str());
        });
  }
  for (ctxsel::slurm::TaskPlacement& task : tasks) {
    if (!task.claim_id.empty()) plugin.renewer->Add(task.claim_id);
    const int rank = task.rank;
    plugin.tasks[rank] = std::move(task);
  }
  return 0;
}

extern "C" int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  Plugin& plugin = State();
  if (!plugin.active) return 0;
  uint32_t rank = 0;
  if (!ctxsel::slurm::Item(sp, S_TASK_GLOBAL_ID, &rank)) {
    slurm_error("ctxsel: cannot read the task's rank");
    return -1;
  }
  auto it = plugin.tasks.find(static_cast<int>(rank));
  if (it == plugin.tasks.end()) {
    slurm_error("ctxsel: rank %u of %s was not placed", rank,
                plugin.holder.c_str());
    return -1;
  }
  const ctxsel::slurm::TaskPlacement& task = it->second;
  if (!task.status.ok()) {
    slurm_error("%s", std::string(task.status.message()).c_str());
    return -1;
  }
  if (!task.note.empty()) slurm_spank_log("%s", task.note.c_str());
  for (const auto& [name, value] : task.environment) {
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      slurm_error("ctxsel: rank %u of %s: cannot set %s", rank,
                  plugin.holder.c_str(), name.c_str());
      return -1;
    }
  }
  return 0;
}

extern "C" int slurm_spank_task_exit(spank_t sp, int ac, char** av) {
  Plugin& plugin = State();
  if (!plugin.active || plugin.client == nullptr) return 0;
  uint32_t rank = 0;
  if (!ctxsel::slurm::Item(sp, S_TASK_GLOBAL_ID, &rank)) return 0;
  auto it = plugin.tasks.find(static_cast<int>(rank));
  if (it == plugin.tasks.end() || it->second.claim_id.empty()) return 0;
  const std::string claim = std::move(it->second.claim_id);
  it->second.claim_id.clear();
  plugin.renewer->Remove(claim);
  ctxsel::slurm::SignalsBlocked blocked;
  if (absl::Status released = plugin.client->ReleaseClaim(claim);
      !released.ok()) {
    // slurm_spank_exit releases it by holder.
    slurm_info("ctxsel: releasing claim %s of rank %u: %s", claim.c_str(), rank,
               released.ToString().c_str());
  }
  return 0;
}

extern "C" int slurm_spank_exit(spank_t sp, int ac, char** av) {
  Plugin& plugin = State();
  if (!spank_remote(sp) || !plugin.active || plugin.client == nullptr) {
    return 0;
  }
  plugin.renewer.reset();
  ctxsel::slurm::SignalsBlocked blocked;
  absl::StatusOr<int> released = plugin.client->ReleaseClaimsOf(plugin.holder);
  if (!released.ok()) {
    slurm_error("ctxsel: releasing the claims of %s: %s", plugin.holder.c_str(),
                released.status().ToString().c_str());
  }
  return 0;
}
