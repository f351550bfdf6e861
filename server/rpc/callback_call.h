// callback_call.h: how a handler on gRPC's callback API ends its call.
// Every ctxsel.v1 handler runs on the callback API, so a call or stream
// holds no thread while its request is on the way, its client is slow or
// it waits for events; handlers that only read memory answer on gRPC's
// callback thread (Answer), those that wait on the store hand their work to
// the WorkerPool once the caller is authorized (AnswerOnWorker), and a
// stream refused before it starts ends through Refused.
//
//   grpc::ServerUnaryReactor* Service::Get(grpc::CallbackServerContext*
//   context,
//                                          const Request* request,
//                                          Response* response) {
//     return Answer(context, DoGet(*context, *request, response));
//   }
#ifndef CTXSEL_SERVER_RPC_CALLBACK_CALL_H_
#define CTXSEL_SERVER_RPC_CALLBACK_CALL_H_

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/functional/any_invocable.h"
#include "server/rpc/worker_pool.h"

namespace ctxsel::server {

// Finishes the call with `status`; returns the reactor the handler returns.
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 const grpc::Status& status);

// Runs `handler` on one of `workers`' threads and finishes the call with the
// status it returns. A call cancelled, or past its deadline, while it waited
// for a thread ends as CallInterrupted says without running `handler`; a
// full queue ends it at once with RESOURCE_EXHAUSTED. `handler` may use the
// call's request and response until it returns.
grpc::ServerUnaryReactor* AnswerOnWorker(
    WorkerPool& workers, grpc::CallbackServerContext* context,
    absl::AnyInvocable<grpc::Status()> handler);

// A streaming call refused before it starts: finishes with `status` and
// deletes itself when done.
//
//   if (!who.ok()) {
//     return new Refused<grpc::ServerWriteReactor<Event>>(
//         ToGrpcStatus(who.status()));
//   }
template <typename Reactor>
class Refused final : public Reactor {
 public:
  explicit Refused(grpc::Status status) { this->Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_CALLBACK_CALL_H_
