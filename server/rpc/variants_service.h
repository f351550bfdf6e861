// variants_service.h: the gRPC edge of ctxsel.v1.Variants. Translates
// requests, delegates to the VariantRegistry, logs each change.
#ifndef CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_
#define CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/registry/variant_registry.h"
#include "server/rpc/worker_pool.h"

namespace ctxsel::server {

class VariantsService final : public v1::Variants::CallbackService {
 public:
  // List pages carry at most `page_bytes` of variants (PageBytes()).
  // Every call is checked by `authorizer`, which must outlive the service.
  // Registrations and deletions, which write the store, run on `workers`
  // (callback_call.h); reads answer on gRPC's callback thread.
  VariantsService(const Authorizer* authorizer, VariantRegistry* registry,
                  WorkerPool* workers, size_t page_bytes)
      : authorizer_(authorizer),
        registry_(registry),
        workers_(workers),
        page_bytes_(page_bytes) {}

  grpc::ServerUnaryReactor* RegisterVariants(
      grpc::CallbackServerContext* context,
      const v1::RegisterVariantsRequest* request,
      v1::RegisterVariantsResponse* response) override;
  grpc::ServerUnaryReactor* ListVariants(
      grpc::CallbackServerContext* context,
      const v1::ListVariantsRequest* request,
      v1::ListVariantsResponse* response) override;
  grpc::ServerUnaryReactor* GetVariant(
      grpc::CallbackServerContext* context,
      const v1::GetVariantRequest* request,
      v1::GetVariantResponse* response) override;
  grpc::ServerUnaryReactor* DeleteVariant(
      grpc::CallbackServerContext* context,
      const v1::DeleteVariantRequest* request,
      v1::DeleteVariantResponse* response) override;

 private:
  // The handlers that write, once the caller is authorized.
  grpc::Status DoRegister(const v1::RegisterVariantsRequest& request,
                          v1::RegisterVariantsResponse* response);
  grpc::Status DoDelete(const v1::DeleteVariantRequest& request,
                        v1::DeleteVariantResponse* response);
  grpc::Status DoList(const grpc::ServerContextBase& context,
                      const v1::ListVariantsRequest& request,
                      v1::ListVariantsResponse* response);

  const Authorizer* const authorizer_;
  VariantRegistry* const registry_;
  WorkerPool* const workers_;
  const size_t page_bytes_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_VARIANTS_SERVICE_H_
