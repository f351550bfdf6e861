#include "base/grpc_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  if (status.message().size() <= kMaxErrorMessageBytes) {
    return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                        std::string(status.message()),
                        ToRpcStatus(status).SerializeAsString());
  }
  // The message travels twice in the trailers (grpc-message and the
  // details' google.rpc.Status), whose size gRPC limits (8 KiB by default):
  // past it, the call and the connection's next call fail. Cut at a UTF-8
  // boundary and keep the details.
  size_t cut = kMaxErrorMessageBytes;
  while (cut > 0 && (status.message()[cut] & 0xC0) == 0x80) --cut;
  absl::Status bounded(
      status.code(),
      absl::StrCat(status.message().substr(0, cut), "... (",
                   status.message().size() - cut, " more bytes)"));
  status.ForEachPayload(
      [&](absl::string_view type_url, const absl::Cord& payload) {
        bounded.SetPayload(type_url, payload);
      });
  return grpc::Status(static_cast<grpc::StatusCode>(bounded.code()),
                      std::string(bounded.message()),
                      ToRpcStatus(bounded).SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status,
                            absl::string_view what) {
  if (status.ok()) return absl::OkStatus();
  // gRPC and Abseil share the canonical code numbering.
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  if (what.empty()) {
    return FromRpcStatus(code, status.error_message(), status.error_details());
  }
  return FromRpcStatus(code, absl::StrCat(what, ": ", status.error_message()),
                       status.error_details());
}

}  // namespace ctxsel
