// gres_conf.h: a node's GPUs as Slurm's gres.conf describes them, written
// in ctxsel's numbering (GresConf) and checked against it (CompareGres), so
// that SLURM_STEP_GPUS=1 and ctxsel's vendor index 1 are the same GPU.
//
// Slurm numbers a GPU by the digits of its File= name (/dev/nvidia1 is
// GPU 1, whatever the line's position; `slurmd -G` prints it as Index=) and
// puts that number in SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES. ctxsel
// reads those numbers as vendor indices (client/cli/launcher_env.h). They
// agree when File=<prefix><vendor_index> names each GPU, which GresConf
// writes:
//
//   absl::StatusOr<std::string> text = GresConf("n1", devices, "");
//   // Name=gpu Type=sm_90 File=/dev/nvidia0 # ctxsel n1/gpu0 GPU-8c5b...
//
//   absl::StatusOr<std::vector<GresDevice>> slurm = ParseGres(text, "n1");
//   std::vector<std::string> differences =
//       CompareGres(*slurm, "n1", devices, "");  // empty: they agree
#ifndef CTXSEL_FORMATS_GRES_CONF_H_
#define CTXSEL_FORMATS_GRES_CONF_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::slurm {

// One GPU as gres.conf (or `slurmd -G`) describes it.
struct GresDevice {
  int line = 0;        // 1-based line of the input
  int index = -1;      // Slurm's number (File= digits, or Index=); -1: none
  std::string type;    // Type=, "" when not given
  std::string file;    // File=, one device (ranges are expanded)
  std::string ctxsel;  // the device id of a "# ctxsel ID ..." annotation
};

// The gres.conf lines for `node`'s GPUs (`devices`: ListDevices of that
// node), one per device with a vendor index, in vendor-index order:
// "Name=gpu Type=<arch> File=<prefix><vendor_index> # ctxsel <id> <uuid>".
// Type is the architecture (nvidia_gpu_sm_90 -> sm_90, amd_gpu_gfx90a ->
// gfx90a). `file_prefix` empty: /dev/nvidia for NVIDIA GPUs.
// FAILED_PRECONDITION when the node has no such GPU or GPUs of two vendors
// (one Slurm numbering cannot name both); INVALID_ARGUMENT naming
// --file_prefix when a GPU's vendor has no default.
absl::StatusOr<std::string> GresConf(const std::string& node,
                                     const std::vector<v1::Device>& devices,
                                     absl::string_view file_prefix);

// The Type= of a GPU in gres.conf: its architecture's short form
// (nvidia_gpu_sm_90 -> sm_90, amd_gpu_gfx90a -> gfx90a), else its class's
// short name. One rule, for GresConf, CompareGres and SubmitOptions.
std::string GresType(const v1::Device& device);

// The sbatch/srun options that ask Slurm for the GPUs of `ranks` (a
// Select's answer: its ranks' placements), so a job lands where its best
// variant runs: "--gres=gpu:sm_90:2", types comma-joined when the ranks
// differ ("--gres=gpu:sm_90:1,gpu:gfx90a:1"). Empty when no rank is on a
// GPU (a host-CPU variant needs no GRES).
std::string SubmitOptions(const std::vector<v1::PlacementChoice>& ranks);

// The Name=gpu records of `text` that apply to `node`: gres.conf lines
// (NodeName= naming another node skips one; File=/dev/nvidia[0-3] is four)
// or the "Gres Name=..." lines `slurmd -G` prints. INVALID_ARGUMENT naming
// the line for a bracket range it cannot expand.
absl::StatusOr<std::vector<GresDevice>> ParseGres(absl::string_view text,
                                                  absl::string_view node);

// One line per difference between Slurm's GPUs (`slurm`) and ctxsel's
// (`devices` of `node`), each naming the ctxsel device or the gres.conf
// line: a GPU Slurm does not number as ctxsel does (missing, twice, another
// Type=, another File= than GresConf writes, or annotated as another ctxsel
// device), and a Slurm GPU that is none of ctxsel's. Empty when they agree.
std::vector<std::string> CompareGres(const std::vector<GresDevice>& slurm,
                                     const std::string& node,
                                     const std::vector<v1::Device>& devices,
                                     absl::string_view file_prefix);

}  // namespace ctxsel::slurm

#endif  // CTXSEL_FORMATS_GRES_CONF_H_
