// launcher_env.h: what a job launcher tells a process through its
// environment — the devices it allocated, the process's rank, the job and
// step it belongs to — read for `select`/`run --from_allocation`, the rank
// of `--count=N`, and the default claim holder.
//
//   absl::StatusOr<AllocationVariable> allocation = FindAllocation(getenv);
//   // {"SLURM_STEP_GPUS", "1,3"}
//   auto devices = client->ListDevices("", node);
//   absl::StatusOr<std::vector<std::string>> allowed =
//       AllowedDevices(*allocation, node, *devices);
//   // {"n1/gpu1", "n1/gpu3"}: Job.allowed_devices
//
// Everything here reads the environment through a Getenv, so tests pass a
// map instead of the process environment.
#ifndef CTXSEL_CLIENT_CLI_LAUNCHER_ENV_H_
#define CTXSEL_CLIENT_CLI_LAUNCHER_ENV_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::cli {

// The value of an environment variable, or null when it is not set.
using Getenv = std::function<const char*(const char*)>;

// std::getenv.
const char* ProcessGetenv(const char* name);

// The variables a launcher leaves its device allocation in, in the order
// --from_allocation reads them: Slurm's GRES indices (absolute: this node's
// vendor indices) first, because a Slurm job confined by cgroups sees
// CUDA_VISIBLE_DEVICES renumbered from 0; then each vendor runtime's own.
inline constexpr const char* kAllocationVariables[] = {
    "SLURM_STEP_GPUS",      "SLURM_JOB_GPUS",      "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"};

// The variables that carry a launcher's rank of this process, in the order
// they are read: Slurm, Open MPI, MPICH/PMI.
inline constexpr const char* kRankVariables[] = {
    "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};

struct AllocationVariable {
  std::string name;   // e.g. "SLURM_STEP_GPUS"
  std::string value;  // e.g. "0,2"
};

// The first of kAllocationVariables that is set (even to ""); FAILED_
// PRECONDITION saying that none is set otherwise.
absl::StatusOr<AllocationVariable> FindAllocation(const Getenv& getenv);

// The Job.allowed_devices entries for `allocation` on `node`, whose devices
// are `node_devices` (ListDevices of that node), in the order given, once
// each. Each comma-separated entry is a vendor index (Slurm: also a range
// "0-3"; ZE_AFFINITY_MASK: also "N.M", a sub-device of device N) or a UUID
// ("GPU-8c5b...", "MIG-..."), which passes through as it is. An index is the
// `vendor_index` of a device whose vendor's visibility variable is this
// one (launch/visibility_env.def; HIP_VISIBLE_DEVICES is ROCm's, like
// ROCR_VISIBLE_DEVICES) and becomes that device's id; for SLURM_*_GPUS, of
// any device with a visibility variable, and INVALID_ARGUMENT when devices
// of two vendors have it. INVALID_ARGUMENT naming the variable and the
// entry for an entry that is neither or names no device of the node, and
// for an empty value.
absl::StatusOr<std::vector<std::string>> AllowedDevices(
    const AllocationVariable& allocation, const std::string& node,
    const std::vector<v1::Device>& node_devices);

// This process's rank from the first of kRankVariables that is set;
// nullopt when none is; INVALID_ARGUMENT naming the variable when its value
// is not a non-negative integer.
absl::StatusOr<std::optional<int>> RankFromEnvironment(const Getenv& getenv);

// "slurm-<job>.<step>" from SLURM_JOB_ID and SLURM_STEP_ID, the claim holder
// by which a Slurm step's epilog releases what its prolog and tasks
// claimed; "" unless both are set.
std::string SlurmHolder(const Getenv& getenv);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_LAUNCHER_ENV_H_
