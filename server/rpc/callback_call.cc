#include "server/rpc/callback_call.h"

#include <utility>

#include "base/status_details.h"
#include "server/rpc/call_interrupt.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* AnswerOnWorker(
    WorkerPool& workers, grpc::CallbackServerContext* context,
    absl::AnyInvocable<grpc::Status()> handler) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status queued = workers.Submit(
      [context, reactor, handler = std::move(handler)]() mutable {
        if (absl::Status s = CallInterrupted(*context); !s.ok()) {
          reactor->Finish(ToGrpcStatus(s));
          return;
        }
        reactor->Finish(handler());
      });
  if (!queued.ok()) reactor->Finish(ToGrpcStatus(queued));
  return reactor;
}

grpc::Status RevokedStatus() {
  return ToGrpcStatus(WithErrorInfo(
      absl::UnauthenticatedError(
          "the credential this stream was opened with was revoked (the server "
          "reread its tokens file)"),
      kReasonCredentialRevoked));
}

}  // namespace ctxsel::server
