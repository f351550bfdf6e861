// proto_convert.h: ctxsel.v1 messages <-> the domain types of model.h and
// the Placer's answers (placement/placement.h); absl::Status -> grpc::Status
// is base/grpc_status.h, re-exported. The RPC handlers translate with these
// and delegate; nothing here decides anything.
//
//   absl::StatusOr<Job> job = JobFromProto(request->job());
//   if (!job.ok()) return ToGrpcStatus(job.status());
#ifndef CTXSEL_SERVER_RPC_PROTO_CONVERT_H_
#define CTXSEL_SERVER_RPC_PROTO_CONVERT_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/grpc_status.h"  // ToGrpcStatus, re-exported
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/claims/claims.h"
#include "server/fleet/inventory.h"
#include "server/fleet/node_proto.h"  // the node codec, re-exported
#include "server/model/model.h"
#include "server/placement/coverage.h"
#include "server/placement/placement.h"
#include "server/registry/variant_registry.h"

namespace ctxsel::server {

// The bytes `message` adds to a reply as one element of a repeated field
// (tag, length, contents): what a page's byte budget counts.
size_t RepeatedFieldBytes(const google::protobuf::MessageLite& message);

void VariantToProto(const Variant& variant, v1::Variant* out);
VariantSpec VariantSpecFromProto(const v1::Variant& variant);

// `stream_epoch`: the epoch of the inventory the event is from.
void EventToProto(const InventoryEvent& event, const std::string& stream_epoch,
                  v1::InventoryEvent* out);

// InvalidArgumentError naming the field ("job.construct[2].name: 'paralel'
// is not an OpenMP construct; did you mean 'parallel'?", "job.policy: unknown
// value 7", "job.top_k: negative"); names follow selector/job_check.h.
absl::StatusOr<Job> JobFromProto(const v1::Job& job);

// The share a claim asks for (ClaimRequest.memory_bytes, compute_percent)
// into `job`: Job::share, and a memory share is also a minimum
// (Job::min_memory_bytes), so a device too small for it never fits rather
// than staying "claimed". InvalidArgumentError "claim.compute_percent: 120
// is not in 0..100".
absl::Status ShareFromProto(const v1::ClaimRequest& claim, Job& job);

// The Placer's answers (server/placement/placement.h). The choice's device
// carries its device class, as in ListDevices: the class's fields are one
// copy of its prebuilt v1::Device (DeviceClass::proto), the device's own
// fields come from Choice::device.
void ChoiceToProto(const placement::Choice& choice, v1::PlacementChoice* out);
// A Select's answer: the choice, explanation and alternatives, `claims` (one
// per rank, or none) and one RankPlacement per rank with the environment
// launch::LaunchEnv gives it for `kernel` (launch/launch_env.h).
void PlacementToProto(const placement::Placement& placement,
                      const std::string& kernel, absl::Span<const Claim> claims,
                      v1::SelectResponse* out);
// The choice only when `report.status` is OK; one DeviceClassReport per
// class (or class and node layout), and the whole text.
void ReportToProto(const placement::PlacementReport& report,
                   v1::ExplainResponse* out);

void ClaimToProto(const Claim& claim, v1::Claim* out);
// One waiter of ClaimBook::Waiters(), 1-based `position` in the queue;
// `waited` counts up to `now`.
void WaiterToProto(const Waiter& waiter, int position, absl::Time now,
                   v1::ClaimWaiter* out);

// Placement.Coverage: the job as JobFromProto reads it, each construct list,
// range, what-if variant (VariantFromSpec's checks) and hypothetical node
// (NormalizeReport's checks) checked; InvalidArgumentError naming the
// field, e.g. "hypothetical_nodes[0]: node.devices[1].index: ...".
absl::StatusOr<placement::CoverageQuery> CoverageQueryFromProto(
    const v1::CoverageRequest& request);
void CoverageToProto(const placement::CoverageReport& report,
                     v1::CoverageResponse* out);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_PROTO_CONVERT_H_
