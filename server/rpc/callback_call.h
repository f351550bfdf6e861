// callback_call.h: how a handler on gRPC's callback API ends its call.
// Every ctxsel.v1 handler but Heartbeat's (heartbeat_queues.h) runs on the
// callback API, so a call or stream holds no thread while its request is on
// the way, its client is slow or it waits for events; handlers that only read
// memory answer on gRPC's callback thread (Answer), those that wait on the
// store hand their work to the WorkerPool once the caller is authorized
// (AnswerOnWorker), a stream refused before it starts ends through Refused, and
// a stream's reactor is reached from other threads through its ReactorLink.
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

#include <functional>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
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

// What another thread may hold of a stream's reactor: the lock that guards
// the reactor's state, and a pointer to it that the stream clears under the
// lock when it is done (a reactor's OnDone), so a late caller (a revocation, an
// inventory wake) finds null instead of a deleted reactor. Made before the
// reactor, so that the stream's Authorizer::StreamGrant can be given
// RevokeThrough(link).
template <typename Reactor>
struct ReactorLink {
  absl::Mutex mu;
  Reactor* reactor ABSL_GUARDED_BY(mu) = nullptr;
};

// A StreamGrant's revoke for the reactor behind `link`: the reactor's
// Revoke(), called with the link's lock held, while the reactor lives.
template <typename Reactor>
std::function<void()> RevokeThrough(
    std::shared_ptr<ReactorLink<Reactor>> link) {
  return [link = std::move(link)] {
    absl::MutexLock lock(&link->mu);
    if (link->reactor != nullptr) link->reactor->Revoke();
  };
}

// How a stream whose credential was revoked ends: UNAUTHENTICATED.
grpc::Status RevokedStatus();

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_CALLBACK_CALL_H_
