// The gRPC edge of ctxsel.v1.Ctxsel: translates requests and delegates, on
// gRPC's callback API (server/rpc/callback_call.h).
#ifndef CTXSEL_SERVER_RPC_CTXSEL_SERVICE_H_
#define CTXSEL_SERVER_RPC_CTXSEL_SERVICE_H_

#include "base/version.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"

namespace ctxsel::server {

inline constexpr const char* kServerVersion = kVersion;

class CtxselService final : public ctxsel::v1::Ctxsel::CallbackService {
 public:
  // Every call is checked by `authorizer`, which must outlive the service.
  explicit CtxselService(const Authorizer* authorizer)
      : authorizer_(authorizer) {}

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context,
                                 const ctxsel::v1::PingRequest* request,
                                 ctxsel::v1::PingResponse* response) override;

 private:
  const Authorizer* const authorizer_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_CTXSEL_SERVICE_H_
