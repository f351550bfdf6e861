// status_details.h: structured error details on absl::Status, the
// google.rpc messages of third_party/googleapis (BadRequest, ErrorInfo,
// ResourceInfo), and their wire form at the gRPC edge.
//
// Code inside keeps returning absl::Status; the details ride as payloads
// keyed by the message's type URL ("type.googleapis.com/google.rpc.
// BadRequest"), set by the helpers below where the code knows the field,
// reason or resource. The edge (base/grpc_status.h: ToGrpcStatus,
// FromGrpcStatus) turns them into google.rpc.Status in
// grpc-status-details-bin and back;
// nothing parses messages to find them.
//
//   return FieldViolation("kernel", "required");   // INVALID_ARGUMENT
//   return WithResourceInfo(
//       WithErrorInfo(absl::NotFoundError("node: 'n1' is not known"),
//                     kReasonNodeNotFound, {{"node", "n1"}}),
//       "ctxsel.v1.Node", "n1");
#ifndef CTXSEL_BASE_STATUS_DETAILS_H_
#define CTXSEL_BASE_STATUS_DETAILS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"
#include "base/error_reasons.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace ctxsel {

// ErrorInfo.domain of every ctxsel error.
inline constexpr char kErrorDomain[] = "ctxsel.dev";

// INVALID_ARGUMENT "<field>: <description>", with a BadRequest naming
// `field` (a request path: "job.construct[1].name", "page_token") and
// ErrorInfo reason kReasonFieldInvalid (WithErrorInfo may name another).
absl::Status FieldViolation(absl::string_view field,
                            absl::string_view description);

// `status` with one more BadRequest field violation; code and message kept.
// A status without an ErrorInfo gets reason kReasonFieldInvalid.
absl::Status WithFieldViolation(absl::Status status, absl::string_view field,
                                absl::string_view description);

// `status` with each BadRequest field that starts with `from` re-rooted at
// `to` ("node.devices[0].id" -> "hypothetical_nodes[2].devices[0].id"), for
// a rule shared by two requests; code, message and other details kept.
absl::Status RebaseFieldViolations(absl::Status status, absl::string_view from,
                                   absl::string_view to);

// `status` with `message` for its message; code and details kept.
absl::Status WithMessage(const absl::Status& status, absl::string_view message);

// `status` with ErrorInfo{reason, kErrorDomain, metadata}; metadata adds to
// what an earlier call set (a later value for a key wins). `reason` is a
// kReason* of base/error_reasons.def, which names the code it goes with.
absl::Status WithErrorInfo(
    absl::Status status, absl::string_view reason,
    const std::vector<std::pair<std::string, std::string>>& metadata = {});

// `status` with ResourceInfo{type, name} ("ctxsel.v1.Variant", "saxpy/nv").
absl::Status WithResourceInfo(absl::Status status,
                              absl::string_view resource_type,
                              absl::string_view resource_name);

// The detail of type T that `status` carries, if any.
template <typename T>
std::optional<T> GetDetail(const absl::Status& status);

// google.rpc.Status for a non-OK `status`: its code, message and every
// detail it carries. Every error gets an ErrorInfo. Every error the server
// makes names a reason of error_reasons.def (//tests/service:
// error_paths_e2e_test); the code's name ("NOT_FOUND") is only the
// defensive default for a status that names none.
google::rpc::Status ToRpcStatus(const absl::Status& status);

// The absl::Status for a call's code, message and grpc-status-details-bin
// bytes (empty when the server sent none): the details come back as
// payloads, so GetDetail reads them as on the server.
absl::Status FromRpcStatus(absl::StatusCode code, absl::string_view message,
                           absl::string_view details_bin);

// One line per detail, for people: "  field job.top_k: negative",
// "  reason KERNEL_NOT_FOUND kernel=saxpy", "  resource ctxsel.v1.Node n1".
std::string DescribeDetails(const absl::Status& status);

// --- implementation ---
std::string DetailTypeUrl(absl::string_view full_name);

template <typename T>
std::optional<T> GetDetail(const absl::Status& status) {
  auto payload = status.GetPayload(DetailTypeUrl(T::descriptor()->full_name()));
  if (!payload.has_value()) return std::nullopt;
  T detail;
  if (!detail.ParseFromString(std::string(*payload))) return std::nullopt;
  return detail;
}

}  // namespace ctxsel

#endif  // CTXSEL_BASE_STATUS_DETAILS_H_
