// placement_service.h: the gRPC edge of ctxsel.v1.Placement. Translates the
// job, asks the Placer (or, for a Select with a claim and the claim RPCs,
// the ClaimBook), translates its answer (both conversions live in
// server/rpc/proto_convert.h), and counts each Select's outcome in Metrics.
#ifndef CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_
#define CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/claims/claims.h"
#include "server/metrics/metrics.h"
#include "server/placement/placer.h"

namespace ctxsel::server {

class PlacementService final : public v1::Placement::Service {
 public:
  // Every call is checked by `authorizer`, which must outlive the service;
  // launchers renew and release only the claims they made. `metrics` may
  // be null (no metrics).
  PlacementService(const Authorizer* authorizer,
                   const placement::Placer* placer, ClaimBook* claims,
                   Metrics* metrics = nullptr,
                   std::function<bool()> store_stale = nullptr)
      : authorizer_(authorizer),
        placer_(placer),
        claims_(claims),
        metrics_(metrics),
        store_stale_(std::move(store_stale)) {}

  grpc::Status Select(grpc::ServerContext* context,
                      const v1::SelectRequest* request,
                      v1::SelectResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status Coverage(grpc::ServerContext* context,
                        const v1::CoverageRequest* request,
                        v1::CoverageResponse* response) override;
  grpc::Status RenewClaim(grpc::ServerContext* context,
                          const v1::RenewClaimRequest* request,
                          v1::RenewClaimResponse* response) override;
  grpc::Status ReleaseClaim(grpc::ServerContext* context,
                            const v1::ReleaseClaimRequest* request,
                            v1::ReleaseClaimResponse* response) override;
  grpc::Status ListClaims(grpc::ServerContext* context,
                          const v1::ListClaimsRequest* request,
                          v1::ListClaimsResponse* response) override;

 private:
  const Authorizer* const authorizer_;
  const placement::Placer* const placer_;
  ClaimBook* const claims_;
  Metrics* const metrics_;
  // True while a shared store cannot be reached (Explain says so); null:
  // never.
  const std::function<bool()> store_stale_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_PLACEMENT_SERVICE_H_
