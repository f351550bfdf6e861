// grpc_status.h: the one converter between absl::Status and grpc::Status,
// used by every server handler and every client (the CLI's client library,
// the agent, the etcd client, the load generator).
//
// Both directions keep the code, the message and the google.rpc details of
// base/status_details.h (BadRequest, ErrorInfo, ResourceInfo), which travel
// as google.rpc.Status in grpc-status-details-bin; so a caller reads
// GetDetail<google::rpc::ErrorInfo>(status) as the server set it.
//
//   if (!job.ok()) return ToGrpcStatus(job.status());         // server
//   grpc::Status s = stub->ReportNode(&context, request, &response);
//   if (!s.ok()) return FromGrpcStatus(s, "ReportNode");      // client
#ifndef CTXSEL_BASE_GRPC_STATUS_H_
#define CTXSEL_BASE_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ctxsel {

// Same code, same message (the canonical codes are shared), and the
// details the status carries as google.rpc.Status in
// grpc-status-details-bin; every error has at least an ErrorInfo
// (ToRpcStatus). Messages longer than kMaxErrorMessageBytes are cut there,
// saying how much was left out, so that an answer never outgrows gRPC's
// trailer limit.
inline constexpr size_t kMaxErrorMessageBytes = 2048;
grpc::Status ToGrpcStatus(const absl::Status& status);

// The absl::Status of a call's answer: its code, message and details (as
// payloads, see base/status_details.h; none when the peer sent none, as
// etcd does). With `what` (the call, "ReportNode"), the message reads
// "what: message"; the details are kept either way.
absl::Status FromGrpcStatus(const grpc::Status& status,
                            absl::string_view what = {});

}  // namespace ctxsel

#endif  // CTXSEL_BASE_GRPC_STATUS_H_
