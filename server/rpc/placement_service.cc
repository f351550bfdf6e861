#include "server/rpc/placement_service.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {
namespace {

// Counts one Select by outcome; a bad request is not a selection (the RPC
// metrics count it).
void CountSelection(Metrics* metrics, const Job& job,
                    const absl::Status& status,
                    const placement::Placement* placement) {
  if (metrics == nullptr) return;
  std::optional<SelectionOutcome> outcome;
  if (status.ok()) {
    outcome = placement->choice.base() ? SelectionOutcome::kBase
                                       : SelectionOutcome::kVariant;
  } else if (absl::IsNotFound(status) || absl::IsFailedPrecondition(status)) {
    outcome = SelectionOutcome::kNone;
  } else if (absl::IsResourceExhausted(status)) {
    outcome = SelectionOutcome::kClaimedOut;
  }
  if (outcome.has_value()) metrics->RecordSelection(*outcome, job.policy);
}

// OK when `who` made claim `id` or is an admin; NotFoundError for a claim
// that is not live, PermissionDeniedError naming both principals otherwise.
absl::Status CheckClaimOwner(const ClaimBook& claims, const Principal& who,
                             const std::string& id) {
  absl::StatusOr<Claim> claim = claims.Find(id);
  if (!claim.ok()) return claim.status();
  if (Authorizer::MayActFor(who, claim->owner)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("claim_id: '", id, "' belongs to '", claim->owner,
                   "', not to '", who.name, "'"));
}

}  // namespace

grpc::Status PlacementService::Select(grpc::ServerContext* context,
                                      const v1::SelectRequest* request,
                                      v1::SelectResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/Select");
  if (!who.ok()) return ToGrpcStatus(who.status());
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (!job.ok()) return ToGrpcStatus(job.status());
  if (!request->has_claim()) {
    absl::StatusOr<placement::Placement> placement = placer_->Select(*job);
    CountSelection(metrics_, *job, placement.status(),
                   placement.ok() ? &*placement : nullptr);
    if (!placement.ok()) return ToGrpcStatus(placement.status());
    PlacementToProto(*placement, response);
    return grpc::Status::OK;
  }
  absl::StatusOr<ClaimBook::Claimed> claimed = claims_->SelectAndClaim(
      *placer_, *job, absl::Milliseconds(request->claim().duration_ms()),
      request->claim().holder(), who->name);
  CountSelection(metrics_, *job, claimed.status(),
                 claimed.ok() ? &claimed->placement : nullptr);
  if (!claimed.ok()) return ToGrpcStatus(claimed.status());
  PlacementToProto(claimed->placement, response);
  ClaimToProto(claimed->claim, response->mutable_claim());
  return grpc::Status::OK;
}

grpc::Status PlacementService::Explain(grpc::ServerContext* context,
                                       const v1::ExplainRequest* request,
                                       v1::ExplainResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Placement/Explain");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (!job.ok()) return ToGrpcStatus(job.status());
  absl::StatusOr<placement::PlacementReport> report = placer_->Explain(*job);
  if (!report.ok()) return ToGrpcStatus(report.status());
  ReportToProto(*report, response);
  return grpc::Status::OK;
}

grpc::Status PlacementService::Coverage(grpc::ServerContext* context,
                                        const v1::CoverageRequest* request,
                                        v1::CoverageResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Placement/Coverage");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<placement::CoverageQuery> query =
      CoverageQueryFromProto(*request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  absl::StatusOr<placement::CoverageReport> report = placer_->Coverage(*query);
  if (!report.ok()) return ToGrpcStatus(report.status());
  CoverageToProto(*report, response);
  return grpc::Status::OK;
}

grpc::Status PlacementService::RenewClaim(grpc::ServerContext* context,
                                          const v1::RenewClaimRequest* request,
                                          v1::RenewClaimResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/RenewClaim");
  if (!who.ok()) return ToGrpcStatus(who.status());
  if (absl::Status s = CheckClaimOwner(*claims_, *who, request->claim_id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  absl::StatusOr<Claim> claim = claims_->Renew(
      request->claim_id(), absl::Milliseconds(request->duration_ms()));
  if (!claim.ok()) return ToGrpcStatus(claim.status());
  ClaimToProto(*claim, response->mutable_claim());
  return grpc::Status::OK;
}

grpc::Status PlacementService::ReleaseClaim(
    grpc::ServerContext* context, const v1::ReleaseClaimRequest* request,
    v1::ReleaseClaimResponse* /*response*/) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/ReleaseClaim");
  if (!who.ok()) return ToGrpcStatus(who.status());
  if (absl::Status s = CheckClaimOwner(*claims_, *who, request->claim_id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(claims_->Release(request->claim_id()));
}

grpc::Status PlacementService::ListClaims(grpc::ServerContext* context,
                                          const v1::ListClaimsRequest* request,
                                          v1::ListClaimsResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Placement/ListClaims");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (const Claim& claim : claims_->List(request->node())) {
    ClaimToProto(claim, response->add_claims());
  }
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
