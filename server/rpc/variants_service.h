// variants_service.h: the gRPC edge of ctxsel.v1.Variants. Translates
// requests, delegates to the VariantRegistry, logs each change.
#ifndef CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_
#define CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/registry/variant_registry.h"

namespace ctxsel::server {

class VariantsService final : public v1::Variants::Service {
 public:
  // List pages carry at most `page_bytes` of variants (PageBytes()).
  // Every call is checked by `authorizer`, which must outlive the service.
  VariantsService(const Authorizer* authorizer, VariantRegistry* registry,
                  size_t page_bytes)
      : authorizer_(authorizer), registry_(registry), page_bytes_(page_bytes) {}

  grpc::Status RegisterVariants(
      grpc::ServerContext* context, const v1::RegisterVariantsRequest* request,
      v1::RegisterVariantsResponse* response) override;
  grpc::Status ListVariants(grpc::ServerContext* context,
                            const v1::ListVariantsRequest* request,
                            v1::ListVariantsResponse* response) override;
  grpc::Status GetVariant(grpc::ServerContext* context,
                          const v1::GetVariantRequest* request,
                          v1::GetVariantResponse* response) override;
  grpc::Status DeleteVariant(grpc::ServerContext* context,
                             const v1::DeleteVariantRequest* request,
                             v1::DeleteVariantResponse* response) override;

 private:
  const Authorizer* const authorizer_;
  VariantRegistry* const registry_;
  const size_t page_bytes_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_
