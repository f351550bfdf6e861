#include "server/placement_service.h"

#include "server/proto_convert.h"

namespace ctxsel::server {

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
