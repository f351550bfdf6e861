// kernel_errors.h: the errors about a kernel that the registry, Select,
// Explain and Coverage all give, with the same code, message and details.
//
//   if (it == kernels.end()) return KernelNotFound(job.kernel);
#ifndef CTXSEL_SERVER_MODEL_KERNEL_ERRORS_H_
#define CTXSEL_SERVER_MODEL_KERNEL_ERRORS_H_

#include <string>

#include "absl/status/status.h"

namespace ctxsel::server {

// NOT_FOUND "kernel 'saxpy' has no registered variants", with ErrorInfo
// KERNEL_NOT_FOUND {kernel} and ResourceInfo ctxsel.v1.Kernel.
absl::Status KernelNotFound(const std::string& kernel);

// INVALID_ARGUMENT "job.variables: ..." with a BadRequest on job.variables,
// for `missing` (selector::CheckVariablesGiven's error).
absl::Status MissingJobVariables(const absl::Status& missing);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MODEL_KERNEL_ERRORS_H_
