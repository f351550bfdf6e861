#include "server/rpc/placement_service.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "server/rpc/call_interrupt.h"
#include "server/rpc/callback_call.h"
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
  CTXSEL_ASSIGN_OR_RETURN(Claim claim, claims.Find(id));
  if (Authorizer::MayActFor(who, claim.owner)) return absl::OkStatus();
  return WithErrorInfo(absl::PermissionDeniedError(absl::StrCat(
                           "claim_id: '", id, "' belongs to '", claim.owner,
                           "', not to '", who.name, "'")),
                       kReasonClaimNotOwned,
                       {{"claim_id", id}, {"owner", claim.owner}});
}

}  // namespace

grpc::ServerUnaryReactor* PlacementService::Select(
    grpc::CallbackServerContext* context, const v1::SelectRequest* request,
    v1::SelectResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/Select");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (!job.ok()) return Answer(context, ToGrpcStatus(job.status()));
  if (request->has_claim()) {
    return AnswerOnWorker(
        *workers_, context,
        [this, who = *std::move(who), job = *std::move(job), request,
         response] { return SelectAndClaim(who, job, *request, response); });
  }
  absl::StatusOr<placement::Placement> placement = placer_->Select(*job);
  CountSelection(metrics_, *job, placement.status(),
                 placement.ok() ? &*placement : nullptr);
  if (!placement.ok()) return Answer(context, ToGrpcStatus(placement.status()));
  PlacementToProto(*placement, job->kernel, {}, response);
  return Answer(context, grpc::Status::OK);
}

grpc::Status PlacementService::SelectAndClaim(const Principal& who,
                                              const Job& job,
                                              const v1::SelectRequest& request,
                                              v1::SelectResponse* response) {
  absl::StatusOr<absl::Duration> duration =
      DurationFromProto(request.claim().duration(), "claim.duration");
  if (!duration.ok()) return ToGrpcStatus(duration.status());
  absl::StatusOr<ClaimBook::Claimed> claimed = claims_->SelectAndClaim(
      *placer_, job, *duration, request.claim().holder(), who.name);
  CountSelection(metrics_, job, claimed.status(),
                 claimed.ok() ? &claimed->placement : nullptr);
  if (!claimed.ok()) return ToGrpcStatus(claimed.status());
  PlacementToProto(claimed->placement, job.kernel,
                   claimed->rank_claims.empty()
                       ? absl::MakeConstSpan(&claimed->claim, 1)
                       : absl::MakeConstSpan(claimed->rank_claims),
                   response);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PlacementService::Explain(
    grpc::CallbackServerContext* context, const v1::ExplainRequest* request,
    v1::ExplainResponse* response) {
  return Answer(context, DoExplain(*context, *request, response));
}

grpc::Status PlacementService::DoExplain(const grpc::ServerContextBase& context,
                                         const v1::ExplainRequest& request,
                                         v1::ExplainResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(context, "Placement/Explain");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<Job> job = JobFromProto(request.job());
  if (!job.ok()) return ToGrpcStatus(job.status());
  absl::StatusOr<placement::PlacementReport> report = placer_->Explain(*job);
  if (!report.ok()) return ToGrpcStatus(report.status());
  // A report over a large fleet is long to render: not for a caller gone.
  if (absl::Status s = CallInterrupted(context); !s.ok()) {
    return ToGrpcStatus(s);
  }
  ReportToProto(*report, response);
  if (store_stale_ && store_stale_()) {
    response->set_stale(true);
    response->set_text(
        "stale: this replica cannot reach the store the replicas share; "
        "answering from the last state it had\n" +
        response->text());
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PlacementService::Coverage(
    grpc::CallbackServerContext* context, const v1::CoverageRequest* request,
    v1::CoverageResponse* response) {
  return Answer(context, DoCoverage(*context, *request, response));
}

grpc::Status PlacementService::DoCoverage(
    const grpc::ServerContextBase& context, const v1::CoverageRequest& request,
    v1::CoverageResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(context, "Placement/Coverage");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::StatusOr<placement::CoverageQuery> query =
      CoverageQueryFromProto(request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  if (absl::Status s = CallInterrupted(context); !s.ok()) {
    return ToGrpcStatus(s);
  }
  absl::StatusOr<placement::CoverageReport> report = placer_->Coverage(*query);
  if (!report.ok()) return ToGrpcStatus(report.status());
  if (absl::Status s = CallInterrupted(context); !s.ok()) {
    return ToGrpcStatus(s);
  }
  CoverageToProto(*report, response);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PlacementService::RenewClaim(
    grpc::CallbackServerContext* context, const v1::RenewClaimRequest* request,
    v1::RenewClaimResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/RenewClaim");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  return AnswerOnWorker(*workers_, context,
                        [this, who = *std::move(who), request, response] {
                          return DoRenewClaim(who, *request, response);
                        });
}

grpc::Status PlacementService::DoRenewClaim(
    const Principal& who, const v1::RenewClaimRequest& request,
    v1::RenewClaimResponse* response) {
  if (absl::Status s = CheckClaimOwner(*claims_, who, request.claim_id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  absl::StatusOr<absl::Duration> duration =
      DurationFromProto(request.duration(), "duration");
  if (!duration.ok()) return ToGrpcStatus(duration.status());
  absl::StatusOr<Claim> claim = claims_->Renew(request.claim_id(), *duration);
  if (!claim.ok()) return ToGrpcStatus(claim.status());
  ClaimToProto(*claim, response->mutable_claim());
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PlacementService::ReleaseClaim(
    grpc::CallbackServerContext* context,
    const v1::ReleaseClaimRequest* request,
    v1::ReleaseClaimResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/ReleaseClaim");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  return AnswerOnWorker(*workers_, context,
                        [this, who = *std::move(who), request, response] {
                          return DoReleaseClaim(who, *request, response);
                        });
}

grpc::Status PlacementService::DoReleaseClaim(
    const Principal& who, const v1::ReleaseClaimRequest& request,
    v1::ReleaseClaimResponse* response) {
  if (request.claim_id().empty() == request.holder().empty()) {
    return ToGrpcStatus(
        FieldViolation(request.holder().empty() ? "claim_id" : "holder",
                       "set exactly one of claim_id and holder"));
  }
  if (!request.holder().empty()) {
    absl::StatusOr<int> released =
        claims_->ReleaseHolder(request.holder(), [&](const Claim& claim) {
          return Authorizer::MayActFor(who, claim.owner);
        });
    if (!released.ok()) return ToGrpcStatus(released.status());
    response->set_released_count(*released);
    return grpc::Status::OK;
  }
  if (absl::Status s = CheckClaimOwner(*claims_, who, request.claim_id());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  if (absl::Status s = claims_->Release(request.claim_id()); !s.ok()) {
    return ToGrpcStatus(s);
  }
  response->set_released_count(1);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* PlacementService::ListClaims(
    grpc::CallbackServerContext* context, const v1::ListClaimsRequest* request,
    v1::ListClaimsResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Placement/ListClaims");
  if (!caller.ok()) return Answer(context, ToGrpcStatus(caller.status()));
  for (const Claim& claim : claims_->List(request->node())) {
    ClaimToProto(claim, response->add_claims());
  }
  return Answer(context, grpc::Status::OK);
}

}  // namespace ctxsel::server
