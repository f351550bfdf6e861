#include "server/placement_service.h"

#include "server/proto_convert.h"

namespace ctxsel::server {
namespace {

void CandidateToProto(const selector::CandidateReport& candidate,
                      v1::CandidateReport* out) {
  out->set_variant(candidate.name);
  out->set_selector(candidate.selector);
  out->set_dynamic(candidate.dynamic);
  out->set_compatible(candidate.compatible);
  out->set_reason(candidate.reason);
  out->set_score(candidate.score);
  for (const selector::ScoreTerm& term : candidate.terms) {
    v1::ScoreTerm* t = out->add_terms();
    t->set_trait(term.trait);
    t->set_value(term.value);
  }
  out->set_subset_of(candidate.subset_of);
  out->set_rank(candidate.rank);
  out->set_in_dynamic_prefix(candidate.in_dynamic_prefix);
  out->set_evaluated(candidate.evaluated);
  out->set_selected(candidate.selected);
}

void ClassToProto(const placement::ClassReport& report,
                  v1::DeviceClassReport* out) {
  out->set_device_class(report.device_class);
  TraitsToProto(report.traits, out->mutable_traits());
  out->set_sycl_architecture(report.sycl_architecture);
  out->set_device_count(report.device_count);
  out->set_eligible_device_count(report.eligible_device_count);
  out->set_eligible(report.eligible);
  out->set_reason(report.reason);
  out->set_node_layout(report.node_layout);
  out->set_winner(report.winner);
  const selector::Selection& selection = report.explanation.selection;
  out->set_base(selection.base());
  out->set_score(selection.score);
  for (const selector::CandidateReport& candidate :
       report.explanation.candidates) {
    if (candidate.selected) out->set_selected_variant(candidate.name);
    CandidateToProto(candidate, out->add_candidates());
  }
}

}  // namespace

void ChoiceToProto(const placement::Choice& choice, v1::PlacementChoice* out) {
  out->set_variant(choice.variant_name());
  out->set_base(choice.base());
  out->set_node(choice.device.node);
  DeviceToProto(choice.device, out->mutable_device());
  out->mutable_device()->set_device_class(choice.device_class);
  out->set_device_class(choice.device_class);
  out->set_score(choice.score);
  out->set_dynamic(choice.dynamic);
}

void PlacementToProto(const placement::Placement& placement,
                      v1::SelectResponse* out) {
  ChoiceToProto(placement.choice, out->mutable_placement());
  out->set_explanation(placement.explanation);
  for (const placement::Choice& alternative : placement.alternatives) {
    ChoiceToProto(alternative, out->add_alternatives());
  }
}

void ReportToProto(const placement::PlacementReport& report,
                   v1::ExplainResponse* out) {
  if (report.status.ok()) {
    ChoiceToProto(report.placement.choice, out->mutable_placement());
  }
  for (const placement::ClassReport& c : report.classes) {
    ClassToProto(c, out->add_classes());
  }
  out->set_text(report.ToText());
}

grpc::Status PlacementService::Select(grpc::ServerContext* /*context*/,
                                      const v1::SelectRequest* request,
                                      v1::SelectResponse* response) {
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (!job.ok()) return ToGrpcStatus(job.status());
  absl::StatusOr<placement::Placement> placement = placer_->Select(*job);
  if (!placement.ok()) return ToGrpcStatus(placement.status());
  PlacementToProto(*placement, response);
  return grpc::Status::OK;
}

grpc::Status PlacementService::Explain(grpc::ServerContext* /*context*/,
                                       const v1::ExplainRequest* request,
                                       v1::ExplainResponse* response) {
  absl::StatusOr<Job> job = JobFromProto(request->job());
  if (!job.ok()) return ToGrpcStatus(job.status());
  absl::StatusOr<placement::PlacementReport> report = placer_->Explain(*job);
  if (!report.ok()) return ToGrpcStatus(report.status());
  ReportToProto(*report, response);
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
