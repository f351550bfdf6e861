// plugin_config.h: what the ctxsel SPANK plugin is told, by the site in
// plugstack.conf (PluginConfig) and by a job in its --ctxsel-* options
// (JobOptions), parsed and checked before any call to the server.
//
//   # plugstack.conf
//   required /usr/lib/ctxsel/ctxsel_spank.so server=ctxsel:7070
//   ca=/etc/ctxsel/ca.pem token_file=/etc/ctxsel/slurm.token
//
//   absl::StatusOr<PluginConfig> config = ParsePluginArgs({"server=...", ...});
//
//   JobOptions job;
//   SetJobOption(JobOption::kKernel, "saxpy", job);
//   SetJobOption(JobOption::kVariables, "N=4096,M=2", job);
//   absl::StatusOr<v1::Job> request = JobFor(job);
//
// Errors are INVALID_ARGUMENT naming the argument or option as the user
// wrote it ("plugstack.conf timeout=soon: ...", "--ctxsel-var=N: ...").
#ifndef CTXSEL_SLURM_PLUGIN_CONFIG_H_
#define CTXSEL_SLURM_PLUGIN_CONFIG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/channel_credentials.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::slurm {

// What a task gets when no device of its step's allocation is free or fits.
enum class Fallback {
  kFail,  // the task fails before exec, naming the reason (the default)
  kBase,  // the task runs the kernel's base function on the node's host CPU
};

// The plugin's arguments in plugstack.conf.
struct PluginConfig {
  // server=HOST:PORT[,HOST:PORT...]: required.
  std::string server;
  // ca=FILE, token_file=FILE, insecure (plaintext: tests and loopback).
  // token_file is read by slurmstepd as root, before privileges drop, so it
  // can be readable by root only.
  ClientSecurity security;
  // timeout=DURATION: the deadline of each call to the server.
  absl::Duration timeout = absl::Seconds(5);
  // fallback=fail|base.
  Fallback fallback = Fallback::kFail;
  // claim=DURATION: how long each claim lasts unless renewed; the plugin
  // renews it at half that while the task runs, so a slurmstepd that dies
  // without releasing leaves a claim for at most this long.
  absl::Duration claim = absl::Minutes(10);
};

// Parses plugstack.conf's arguments (KEY=VALUE or `insecure`), each once.
// INVALID_ARGUMENT naming the argument for an unknown key, a bad value, a
// repeat, a missing server=, or `insecure` with ca= or token_file=.
absl::StatusOr<PluginConfig> ParsePluginArgs(
    const std::vector<std::string>& args);

// The options a job gives in srun/sbatch/salloc (also as #SBATCH lines).
enum class JobOption {
  kKernel,     // --ctxsel-kernel=K
  kConstruct,  // --ctxsel-construct=target,teams,parallel,for
  kVariables,  // --ctxsel-var=N=4096[,M=2...]
};

// The option's name as users type it, e.g. "ctxsel-kernel".
absl::string_view JobOptionName(JobOption option);

struct JobOptions {
  std::string kernel;
  std::vector<std::string> construct;
  std::vector<std::pair<std::string, int64_t>> variables;
};

// Sets `option` from its value; INVALID_ARGUMENT naming the option and the
// bad part (an empty kernel or construct name, a variable that is not
// NAME=INTEGER, a name given twice). A variable list replaces the previous
// one, as Slurm keeps only the last occurrence of an option.
absl::Status SetJobOption(JobOption option, absl::string_view value,
                          JobOptions& options);

// True when the job gave any --ctxsel-* option: the plugin acts on the step.
bool Requested(const JobOptions& options);

// The Job to select for; INVALID_ARGUMENT when --ctxsel-construct or
// --ctxsel-var is given without --ctxsel-kernel.
absl::StatusOr<v1::Job> JobFor(const JobOptions& options);

}  // namespace ctxsel::slurm

#endif  // CTXSEL_SLURM_PLUGIN_CONFIG_H_
