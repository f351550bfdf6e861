#include "server/ctxsel_service.h"

namespace ctxsel::server {

grpc::Status CtxselService::Ping(grpc::ServerContext* /*context*/,
                                 const ctxsel::v1::PingRequest* request,
                                 ctxsel::v1::PingResponse* response) {
  response->set_payload(request->payload());
  response->set_server_version(kServerVersion);
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
