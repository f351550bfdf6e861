#include "server/rpc/ctxsel_service.h"

#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

grpc::ServerUnaryReactor* CtxselService::Ping(
    grpc::CallbackServerContext* context,
    const ctxsel::v1::PingRequest* request,
    ctxsel::v1::PingResponse* response) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Ctxsel/Ping");
  if (!caller.ok()) return Answer(context, ToGrpcStatus(caller.status()));
  response->set_payload(request->payload());
  response->set_server_version(kServerVersion);
  return Answer(context, grpc::Status::OK);
}

}  // namespace ctxsel::server
