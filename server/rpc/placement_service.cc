#include "server/rpc/placement_service.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/error_reasons.h"
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

// The reactor of a claiming Select with ClaimRequest.wait. Its answer comes
// from the ClaimBook (ClaimDone), on whichever thread serves or ends the
// wait; OnCancel takes it out of the queue. What both the worker that
// parks it and OnCancel touch lives in State, which outlives the reactor
// (the answer, and so OnDone, may come before the worker has returned).
class PlacementService::WaitingSelect final : public grpc::ServerUnaryReactor {
 public:
  WaitingSelect(PlacementService* service, grpc::CallbackServerContext* context,
                v1::SelectResponse* response)
      : service_(service),
        context_(context),
        response_(response),
        state_(std::make_shared<State>()) {}

  // On a worker: claims, or joins the queue.
  void Start(const Principal& who, const Job& job, absl::Duration duration,
             const v1::SelectRequest& request, ClaimBook::WaitFor wait) {
    if (absl::Status s = CallInterrupted(*context_); !s.ok()) {
      Finish(ToGrpcStatus(s));
      return;
    }
    std::shared_ptr<State> state = state_;
    ClaimBook* claims = service_->claims_;
    const uint64_t waiter = claims->SelectAndClaimOrWait(
        *service_->placer_, job, duration, request.claim().holder(), who.name,
        wait,
        [this, job,
         start = absl::Now()](absl::StatusOr<ClaimBook::Claimed> claimed) {
          Done(job, start, std::move(claimed));
        });
    // `this` may be gone now: only `state` and `claims`.
    if (waiter == 0) return;
    bool cancelled = false;
    {
      absl::MutexLock lock(&state->mu);
      state->waiter = waiter;
      cancelled = state->cancelled;
    }
    if (cancelled) claims->CancelWaiter(waiter, CancelledWhileWaiting());
  }

  void OnCancel() override {
    uint64_t waiter = 0;
    {
      absl::MutexLock lock(&state_->mu);
      state_->cancelled = true;
      waiter = state_->waiter;
    }
    if (waiter != 0) {
      service_->claims_->CancelWaiter(waiter, CancelledWhileWaiting());
    }
  }
  void OnDone() override { delete this; }

 private:
  struct State {
    absl::Mutex mu;
    uint64_t waiter ABSL_GUARDED_BY(mu) = 0;
    bool cancelled ABSL_GUARDED_BY(mu) = false;
  };

  static absl::Status CancelledWhileWaiting() {
    return absl::CancelledError(
        "the call was cancelled or passed its deadline while it waited for a "
        "claim");
  }

  void Done(const Job& job, absl::Time start,
            absl::StatusOr<ClaimBook::Claimed> claimed) {
    Metrics* metrics = service_->metrics_;
    CountSelection(metrics, job, claimed.status(),
                   claimed.ok() ? &claimed->placement : nullptr);
    if (metrics != nullptr) {
      metrics->RecordClaimWait(WaitOutcome(claimed.status()),
                               absl::Now() - start);
    }
    if (!claimed.ok()) {
      Finish(ToGrpcStatus(claimed.status()));
      return;
    }
    std::vector<Claim> claims = claimed->rank_claims;
    if (claims.empty()) claims.push_back(claimed->claim);
    if (context_->IsCancelled()) {
      // Granted as the caller left: nobody would release it.
      for (const Claim& claim : claims) {
        service_->claims_->Release(claim.id).IgnoreError();
      }
      Finish(ToGrpcStatus(CancelledWhileWaiting()));
      return;
    }
    PlacementToProto(claimed->placement, job.kernel, claims, response_);
    Finish(grpc::Status::OK);
  }

  static absl::string_view WaitOutcome(const absl::Status& status) {
    if (status.ok()) return "granted";
    if (absl::IsCancelled(status)) return "cancelled";
    std::optional<google::rpc::ErrorInfo> info =
        GetDetail<google::rpc::ErrorInfo>(status);
    if (info.has_value() && info->reason() == kReasonClaimWaitExpired) {
      return "expired";
    }
    return "failed";
  }

  PlacementService* const service_;
  grpc::CallbackServerContext* const context_;
  v1::SelectResponse* const response_;
  const std::shared_ptr<State> state_;
};

grpc::ServerUnaryReactor* PlacementService::Select(
    grpc::CallbackServerContext* context, const v1::SelectRequest* request,
    v1::SelectResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Placement/Select");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (job.ok()) job->explanation = !request->omit_explanation();
  if (job.ok() && request->has_claim()) {
    if (absl::Status s = ShareFromProto(request->claim(), *job); !s.ok()) {
      job = s;
    }
  }
  if (!job.ok()) return Answer(context, ToGrpcStatus(job.status()));
  const bool waits = request->has_claim() && (request->claim().has_wait() ||
                                              request->claim().priority() != 0);
  if (waits) {
    absl::StatusOr<absl::Duration> duration =
        DurationFromProto(request->claim().duration(), "claim.duration");
    if (!duration.ok()) return Answer(context, ToGrpcStatus(duration.status()));
    absl::StatusOr<absl::Duration> wait =
        DurationFromProto(request->claim().wait(), "claim.wait");
    if (!wait.ok()) return Answer(context, ToGrpcStatus(wait.status()));
    if (request->claim().priority() > 0 && who->role != Role::kAdmin) {
      return Answer(context,
                    ToGrpcStatus(WithErrorInfo(
                        absl::PermissionDeniedError(absl::StrCat(
                            "claim.priority: ", request->claim().priority(),
                            " is for the admin role; '", who->name, "' is ",
                            RoleName(who->role), " (leave it 0)")),
                        kReasonPriorityNotAllowed)));
    }
    if (*wait == absl::ZeroDuration()) {
      // A priority without a wait: nothing to order.
      return AnswerOnWorker(
          *workers_, context,
          [this, who = *std::move(who), job = *std::move(job), request,
           response] { return SelectAndClaim(who, job, *request, response); });
    }
    auto* call = new WaitingSelect(this, context, response);
    absl::Status queued =
        workers_->Submit([call, who = *std::move(who), job = *std::move(job),
                          duration = *duration, request,
                          wait = ClaimBook::WaitFor{
                              *wait, request->claim().priority()}]() mutable {
          call->Start(who, job, duration, *request, wait);
        });
    if (!queued.ok()) call->Finish(ToGrpcStatus(queued));
    return call;
  }
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
  if (request->waiting()) {
    const absl::Time now = absl::Now();
    int position = 0;
    for (const Waiter& waiter : claims_->Waiters()) {
      WaiterToProto(waiter, ++position, now, response->add_waiters());
    }
  }
  return Answer(context, grpc::Status::OK);
}

}  // namespace ctxsel::server
