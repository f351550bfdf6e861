// eval_kernel.h: which variants of an eval document compete.
//
// Variants of different kernels (base functions) never compete: `eval`
// evaluates one kernel at a time. A variant names its kernel or, with an
// empty name, belongs to whichever kernel is evaluated.
//
//   CTXSEL_ASSIGN_OR_RETURN(std::string kernel,
//                           ChooseKernel(requested, variants));
//   Resolve(CandidatesOf(kernel, std::move(variants)), context);
#ifndef CTXSEL_CLIENT_CLI_EVAL_KERNEL_H_
#define CTXSEL_CLIENT_CLI_EVAL_KERNEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "selector/selector.h"

namespace ctxsel::cli {

// A variant of an eval document and the kernel it names ("" for none).
struct KernelVariant {
  std::string kernel;
  selector::Candidate candidate;
};

// The kernel to evaluate: `requested` (the document's "kernel" or
// --kernel) when not empty, else the one kernel the variants name, else ""
// (none named). INVALID_ARGUMENT when nothing is requested and the variants
// name several kernels, or when `requested` has none of the variants.
absl::StatusOr<std::string> ChooseKernel(
    const std::string& requested, const std::vector<KernelVariant>& variants);

// The candidates of `kernel` (those that name it or no kernel), in order.
std::vector<selector::Candidate> CandidatesOf(
    const std::string& kernel, std::vector<KernelVariant> variants);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_EVAL_KERNEL_H_
