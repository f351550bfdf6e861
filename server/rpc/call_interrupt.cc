#include "server/rpc/call_interrupt.h"

#include <chrono>

namespace ctxsel::server {

absl::Status CallInterrupted(const grpc::ServerContextBase& context) {
  // The deadline first: gRPC also marks a call past its deadline cancelled.
  if (context.deadline() <= std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError(
        "the call's deadline passed before the server finished");
  }
  if (context.IsCancelled()) {
    return absl::CancelledError("the call was cancelled");
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::server
