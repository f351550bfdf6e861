#include "server/rpc/ctxsel_service.h"

#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

grpc::Status CtxselService::Ping(grpc::ServerContext* context,
                                 const ctxsel::v1::PingRequest* request,
                                 ctxsel::v1::PingResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Ctxsel/Ping");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  response->set_payload(request->payload());
  response->set_server_version(kServerVersion);
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
