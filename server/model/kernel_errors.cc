#include "server/model/kernel_errors.h"

#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel::server {

absl::Status KernelNotFound(const std::string& kernel) {
  return WithResourceInfo(
      WithErrorInfo(absl::NotFoundError(absl::StrCat(
                        "kernel '", kernel, "' has no registered variants")),
                    kReasonKernelNotFound, {{"kernel", kernel}}),
      "ctxsel.v1.Kernel", kernel);
}

absl::Status MissingJobVariables(const absl::Status& missing) {
  return FieldViolation("job.variables", missing.message());
}

}  // namespace ctxsel::server
