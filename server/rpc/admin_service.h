// admin_service.h: the gRPC edge of ctxsel.v1.Admin: operators' cordons
// (CordonBook, server/claims/cordons.h) and online backup of the variant
// store. The copy is written to a temporary file in the data
// directory (Store::Backup) on a WorkerPool thread, streamed in chunks from
// gRPC's callback threads (a reactor, no thread held while the client
// reads) and deleted when the stream is done.
#ifndef CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_
#define CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_

#include <string>

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/claims/cordons.h"
#include "server/rpc/worker_pool.h"
#include "server/store/store.h"

namespace ctxsel::server {

class AdminService final : public v1::Admin::CallbackService {
 public:
  // Backups are staged in `scratch_dir` (the data directory: same disk,
  // same permissions as the store) by one of `workers`. Every call is
  // checked by `authorizer`, which must outlive the service, as must
  // `cordons`.
  AdminService(const Authorizer* authorizer, Store* store, WorkerPool* workers,
               std::string scratch_dir, CordonBook* cordons)
      : authorizer_(authorizer),
        store_(store),
        workers_(workers),
        scratch_dir_(std::move(scratch_dir)),
        cordons_(cordons) {}

  grpc::ServerWriteReactor<v1::BackupChunk>* Backup(
      grpc::CallbackServerContext* context,
      const v1::BackupRequest* request) override;
  grpc::ServerUnaryReactor* CordonDevices(
      grpc::CallbackServerContext* context,
      const v1::CordonDevicesRequest* request,
      v1::CordonDevicesResponse* response) override;
  grpc::ServerUnaryReactor* UncordonDevices(
      grpc::CallbackServerContext* context,
      const v1::UncordonDevicesRequest* request,
      v1::UncordonDevicesResponse* response) override;
  grpc::ServerUnaryReactor* ListCordons(
      grpc::CallbackServerContext* context,
      const v1::ListCordonsRequest* request,
      v1::ListCordonsResponse* response) override;

 private:
  const Authorizer* const authorizer_;
  Store* const store_;
  WorkerPool* const workers_;
  const std::string scratch_dir_;
  CordonBook* const cordons_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_
