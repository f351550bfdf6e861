// placement_service.h: the gRPC edge of ctxsel.v1.Placement. Translates the
// job, asks the Placer (or, for a Select with a claim and the claim RPCs,
// the ClaimBook), translates its answer (both conversions live in
// server/rpc/proto_convert.h), and counts each Select's outcome in Metrics.
// On gRPC's callback API (callback_call.h): the calls that write claims run
// on the WorkerPool, the rest on gRPC's callback thread. A claiming Select
// with ClaimRequest.wait that finds every fitting device claimed waits in
// the ClaimBook's queue holding no thread: its reactor is answered by the
// release, expiry or Tick that serves it, and a cancelled call (or one past
// its deadline) leaves the queue. Priorities above 0 are for admins.
#ifndef CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_
#define CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/claims/claims.h"
#include "server/metrics/metrics.h"
#include "server/placement/placer.h"
#include "server/rpc/arena_messages.h"
#include "server/rpc/worker_pool.h"

namespace ctxsel::server {

class PlacementService final : public v1::Placement::CallbackService {
 public:
  // Every call is checked by `authorizer`, which must outlive the service;
  // launchers renew and release only the claims they made. Calls that write
  // claims run on `workers` (callback_call.h); the others answer on gRPC's
  // callback thread. `metrics` may be null (no metrics).
  PlacementService(const Authorizer* authorizer,
                   const placement::Placer* placer, ClaimBook* claims,
                   WorkerPool* workers, Metrics* metrics = nullptr,
                   std::function<bool()> store_stale = nullptr)
      : authorizer_(authorizer),
        placer_(placer),
        claims_(claims),
        workers_(workers),
        metrics_(metrics),
        store_stale_(std::move(store_stale)) {
    SetMessageAllocatorFor_Select(&select_messages_);
  }

  grpc::ServerUnaryReactor* Select(grpc::CallbackServerContext* context,
                                   const v1::SelectRequest* request,
                                   v1::SelectResponse* response) override;
  grpc::ServerUnaryReactor* Explain(grpc::CallbackServerContext* context,
                                    const v1::ExplainRequest* request,
                                    v1::ExplainResponse* response) override;
  grpc::ServerUnaryReactor* Coverage(grpc::CallbackServerContext* context,
                                     const v1::CoverageRequest* request,
                                     v1::CoverageResponse* response) override;
  grpc::ServerUnaryReactor* RenewClaim(
      grpc::CallbackServerContext* context,
      const v1::RenewClaimRequest* request,
      v1::RenewClaimResponse* response) override;
  grpc::ServerUnaryReactor* ReleaseClaim(
      grpc::CallbackServerContext* context,
      const v1::ReleaseClaimRequest* request,
      v1::ReleaseClaimResponse* response) override;
  grpc::ServerUnaryReactor* ListClaims(
      grpc::CallbackServerContext* context,
      const v1::ListClaimsRequest* request,
      v1::ListClaimsResponse* response) override;

 private:
  class WaitingSelect;  // a claiming Select that may wait

  // The handlers, once the caller `who` is authorized.
  grpc::Status SelectAndClaim(const Principal& who, const Job& job,
                              const v1::SelectRequest& request,
                              v1::SelectResponse* response);
  grpc::Status DoExplain(const grpc::ServerContextBase& context,
                         const v1::ExplainRequest& request,
                         v1::ExplainResponse* response);
  grpc::Status DoCoverage(const grpc::ServerContextBase& context,
                          const v1::CoverageRequest& request,
                          v1::CoverageResponse* response);
  grpc::Status DoRenewClaim(const Principal& who,
                            const v1::RenewClaimRequest& request,
                            v1::RenewClaimResponse* response);
  grpc::Status DoReleaseClaim(const Principal& who,
                              const v1::ReleaseClaimRequest& request,
                              v1::ReleaseClaimResponse* response);

  const Authorizer* const authorizer_;
  const placement::Placer* const placer_;
  ClaimBook* const claims_;
  WorkerPool* const workers_;
  Metrics* const metrics_;
  // True while a shared store cannot be reached (Explain says so); null:
  // never.
  const std::function<bool()> store_stale_;
  // A Select's request and answer live on a reused arena: building and
  // freeing an answer's ~150 nested messages and strings one by one cost
  // about as many instructions as the decision.
  ArenaMessages<v1::SelectRequest, v1::SelectResponse> select_messages_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_
