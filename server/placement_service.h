// placement_service.h: the gRPC edge of ctxsel.v1.Placement. Translates the
// job, asks the Placer, translates its answer (both conversions live in
// server/proto_convert.h).
#ifndef CTXSEL_SERVER_PLACEMENT_SERVICE_H_
#define CTXSEL_SERVER_PLACEMENT_SERVICE_H_

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/placement/placer.h"

namespace ctxsel::server {

class PlacementService final : public v1::Placement::Service {
 public:
  explicit PlacementService(const placement::Placer* placer)
      : placer_(placer) {}

  grpc::Status Select(grpc::ServerContext* context,
                      const v1::SelectRequest* request,
                      v1::SelectResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;

 private:
  const placement::Placer* const placer_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_PLACEMENT_SERVICE_H_
