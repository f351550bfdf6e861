// call_interrupt.h: whether a call's handler should stop — the one test
// every long-running unary or server-streaming handler (ListDevices,
// ListVariants, Explain, Coverage, Backup) makes, so each ends with the same
// code and message. (WatchInventory's reactor ends through OnCancel.)
//
//   CTXSEL_RETURN_IF_ERROR(CallInterrupted(*context));
#ifndef CTXSEL_SERVER_RPC_CALL_INTERRUPT_H_
#define CTXSEL_SERVER_RPC_CALL_INTERRUPT_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace ctxsel::server {

// DeadlineExceededError once the call's deadline has passed (the client
// gave up waiting), CancelledError once it was cancelled otherwise, OK
// while it runs.
absl::Status CallInterrupted(const grpc::ServerContextBase& context);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_CALL_INTERRUPT_H_
