// launch_env.h: the environment that makes a process run where a placement
// says (docs/launchers.md lists every variable). The one rule: the server
// fills each rank's SelectResponse.ranks[].environment with it, and
// ctxsel-cli falls back to it only for a server that sends no ranks;
// launch/env_format.h prints it in a launcher's format.
//
//   LaunchEnvironment env = LaunchEnv(response.placement(), "saxpy");
//   // {CTXSEL_VARIANT, saxpy_nv}, {CTXSEL_NODE, gpu-nv}, ...,
//   // {CUDA_VISIBLE_DEVICES, GPU-8c5b...}, {OMP_DEFAULT_DEVICE, 0}
//   std::fputs(ExportLines(env).c_str(), stdout);
//   // export CTXSEL_VARIANT='saxpy_nv'
//   // ...
#ifndef CTXSEL_LAUNCH_LAUNCH_ENV_H_
#define CTXSEL_LAUNCH_LAUNCH_ENV_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::launch {

// (name, value) pairs in the order they should be set.
using LaunchEnvironment = std::vector<std::pair<std::string, std::string>>;

// The variables for `choice`: CTXSEL_VARIANT (the variant, or `kernel` when
// the base function was chosen), CTXSEL_NODE, CTXSEL_DEVICE,
// CTXSEL_DEVICE_INDEX, CTXSEL_CLAIM (only when `claim` is not empty),
// CTXSEL_RUNTIME_ONLY_VARIANTS (comma-separated, best first, only when a
// variant with a runtime-only condition ranks above the choice); then,
// for an accelerator, its vendor's visibility variable (visibility_env.def;
// by UUID where the runtime takes one, else by vendor_index after the row's
// order variable) and OMP_DEFAULT_DEVICE=0 (the one device the runtime then
// sees); for an accelerator whose vendor has no such variable, or that has
// neither UUID nor vendor_index, only OMP_DEFAULT_DEVICE=<its device index>;
// or, for the host CPU, OMP_NUM_THREADS (its compute units), OMP_PLACES=cores,
// OMP_PROC_BIND=close and OMP_TARGET_OFFLOAD=DISABLED (target regions run on
// the chosen host).
LaunchEnvironment LaunchEnv(const v1::PlacementChoice& choice,
                            absl::string_view kernel,
                            absl::string_view claim = "");

// The same for the claim `claim` (none when its id is empty); for an NVIDIA
// device claimed by share (Claim.memory_bytes, compute_percent), also
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the compute share, else the memory
// share's percentage of the device's memory rounded up. Advisory: CUDA's
// MPS enforces it only where its control daemon runs; elsewhere (and for
// other vendors, which have no such variable) only the accounting holds.
LaunchEnvironment LaunchEnv(const v1::PlacementChoice& choice,
                            absl::string_view kernel, const v1::Claim& claim);

// `value` in single quotes, safe for any POSIX shell.
std::string ShellQuote(absl::string_view value);

// One "export NAME='value'" line per variable.
std::string ExportLines(const LaunchEnvironment& env);

}  // namespace ctxsel::launch

#endif  // CTXSEL_LAUNCH_LAUNCH_ENV_H_
