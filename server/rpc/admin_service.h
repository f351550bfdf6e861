// admin_service.h: the gRPC edge of ctxsel.v1.Admin: online backup of the
// variant store. The copy is written to a temporary file in the data
// directory (Store::Backup), streamed in chunks and deleted.
#ifndef CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_
#define CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_

#include <string>

#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/access/auth.h"
#include "server/store/store.h"

namespace ctxsel::server {

class AdminService final : public v1::Admin::Service {
 public:
  // Backups are staged in `scratch_dir` (the data directory: same disk,
  // same permissions as the store). Every call is checked by `authorizer`,
  // which must outlive the service.
  AdminService(const Authorizer* authorizer, Store* store,
               std::string scratch_dir)
      : authorizer_(authorizer),
        store_(store),
        scratch_dir_(std::move(scratch_dir)) {}

  grpc::Status Backup(grpc::ServerContext* context,
                      const v1::BackupRequest* request,
                      grpc::ServerWriter<v1::BackupChunk>* writer) override;

 private:
  const Authorizer* const authorizer_;
  Store* const store_;
  const std::string scratch_dir_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_ADMIN_SERVICE_H_
