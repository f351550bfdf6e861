#include "server/rpc/admin_service.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "server/rpc/call_interrupt.h"
#include "server/rpc/proto_convert.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

// Well under the default 4 MiB message limit.
constexpr size_t kChunkBytes = 256 << 10;

// Deletes the staged copy however the call ends.
class ScratchFile {
 public:
  explicit ScratchFile(std::string path) : path_(std::move(path)) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

grpc::Status AdminService::Backup(grpc::ServerContext* context,
                                  const v1::BackupRequest* /*request*/,
                                  grpc::ServerWriter<v1::BackupChunk>* writer) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Admin/Backup");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  std::string pattern = scratch_dir_ + "/backup-XXXXXX";
  const int fd = mkstemp(pattern.data());
  if (fd < 0) {
    spdlog::error("admin: cannot create {}: {}", pattern, std::strerror(errno));
    return grpc::Status(
        errno == ENOSPC ? grpc::StatusCode::RESOURCE_EXHAUSTED
                        : grpc::StatusCode::INTERNAL,
        "cannot stage the backup on the server (details in the server log)");
  }
  close(fd);
  ScratchFile scratch(pattern);
  absl::StatusOr<StoreSummary> summary = store_->Backup(scratch.path());
  if (!summary.ok()) return ToGrpcStatus(summary.status());

  std::ifstream in(scratch.path(), std::ios::binary | std::ios::ate);
  v1::BackupChunk chunk;
  v1::BackupSummary* out = chunk.mutable_summary();
  out->set_revision(summary->revision);
  out->set_variant_count(summary->variant_count);
  out->set_kernel_count(summary->kernel_count);
  const int64_t size = static_cast<int64_t>(in.tellg());
  out->set_size_bytes(size);
  in.seekg(0);
  std::string buffer(kChunkBytes, '\0');
  int64_t sent = 0;
  do {
    in.read(buffer.data(), buffer.size());
    chunk.set_data(buffer.data(), static_cast<size_t>(in.gcount()));
    sent += in.gcount();
    if (!writer->Write(chunk)) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "backup stream closed by the client");
    }
    chunk.clear_summary();
    // A client gone mid-stream is not a backup the server failed to read.
    if (absl::Status s = CallInterrupted(*context); !s.ok()) {
      return ToGrpcStatus(s);
    }
  } while (in);
  if (in.bad() || sent != size) {
    spdlog::error("admin: cannot read the staged backup {}", scratch.path());
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "cannot read the staged backup (details in the server "
                        "log)");
  }
  spdlog::info("admin: backup of revision {} ({} variant(s), {} bytes) sent",
               summary->revision, summary->variant_count, sent);
  return grpc::Status::OK;
}

}  // namespace ctxsel::server
