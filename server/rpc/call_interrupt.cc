#include "server/rpc/call_interrupt.h"

#include <chrono>

#include "base/status_details.h"

namespace ctxsel::server {

absl::Status CallInterrupted(const grpc::ServerContextBase& context) {
  // The deadline first: gRPC also marks a call past its deadline cancelled.
  if (context.deadline() <= std::chrono::system_clock::now()) {
    return WithErrorInfo(
        absl::DeadlineExceededError(
            "the call's deadline passed before the server finished"),
        kReasonCallDeadlinePassed);
  }
  if (context.IsCancelled()) {
    return WithErrorInfo(absl::CancelledError("the call was cancelled"),
                         kReasonCallCancelled);
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
