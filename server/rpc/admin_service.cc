#include "server/rpc/admin_service.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/time/time.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "server/rpc/call_interrupt.h"
#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

void CordonToProto(const Cordon& cordon, v1::DeviceCordon* out) {
  out->set_device(cordon.device);
  out->set_node(cordon.node);
  out->set_reason(cordon.reason);
  out->set_drain(cordon.drain);
  out->set_cordoned_by(cordon.by);
  *out->mutable_create_time() =
      ToProtoTimestamp(absl::FromUnixMillis(cordon.unix_ms));
}

// Well under the default 4 MiB message limit.
constexpr size_t kChunkBytes = 256 << 10;

// One Backup stream: stages the copy on a worker thread, then writes it a
// chunk at a time, reading the next chunk when the previous one is sent.
// One step runs at a time (staging, then each write's completion), so the
// state needs no lock. Deletes itself, and the staged copy, when done.
class BackupReactor final : public grpc::ServerWriteReactor<v1::BackupChunk> {
 public:
  BackupReactor(grpc::CallbackServerContext* context, Store* store,
                WorkerPool& workers, const std::string& scratch_dir)
      : context_(context), store_(store), scratch_(scratch_dir + "/backup-") {
    absl::Status queued = workers.Submit([this] { Stage(); });
    if (!queued.ok()) Finish(ToGrpcStatus(queued));
  }
  ~BackupReactor() override {
    if (staged_) std::remove(scratch_.c_str());
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(ToGrpcStatus(WithErrorInfo(
          absl::CancelledError("backup stream closed by the client"),
          kReasonCallCancelled)));
      return;
    }
    chunk_.clear_summary();
    if (in_) {
      // A client gone mid-stream is not a backup the server failed to read.
      if (absl::Status s = CallInterrupted(*context_); !s.ok()) {
        Finish(ToGrpcStatus(s));
        return;
      }
      SendNext();
      return;
    }
    if (in_.bad() || sent_ != size_) {
      spdlog::error("admin: cannot read the staged backup {}", scratch_);
      Finish(ToGrpcStatus(
          WithErrorInfo(absl::InternalError("cannot read the staged backup "
                                            "(details in the server log)"),
                        kReasonStoreFailed)));
      return;
    }
    spdlog::info("admin: backup of revision {} ({} variant(s), {} bytes) sent",
                 revision_, variants_, sent_);
    Finish(grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  // On a worker thread: the store's copy, then the first chunk.
  void Stage() {
    scratch_ += "XXXXXX";
    const int fd = mkstemp(scratch_.data());
    if (fd < 0) {
      const int error = errno;
      spdlog::error("admin: cannot create {}: {}", scratch_,
                    std::strerror(error));
      constexpr char kText[] =
          "cannot stage the backup on the server (details in the server log)";
      Finish(ToGrpcStatus(
          error == ENOSPC
              ? WithErrorInfo(absl::ResourceExhaustedError(kText),
                              kReasonStoreFull)
              : WithErrorInfo(absl::InternalError(kText), kReasonStoreFailed)));
      return;
    }
    close(fd);
    staged_ = true;
    absl::StatusOr<StoreSummary> summary = store_->Backup(scratch_);
    if (!summary.ok()) {
      Finish(ToGrpcStatus(summary.status()));
      return;
    }
    revision_ = summary->revision;
    variants_ = summary->variant_count;
    in_.open(scratch_, std::ios::binary | std::ios::ate);
    size_ = static_cast<int64_t>(in_.tellg());
    in_.seekg(0);
    v1::BackupSummary* out = chunk_.mutable_summary();
    out->set_revision(summary->revision);
    out->set_variant_count(summary->variant_count);
    out->set_kernel_count(summary->kernel_count);
    out->set_size_bytes(size_);
    buffer_.resize(kChunkBytes);
    SendNext();
  }

  // Reads the next chunk (the last one when the file ends) and sends it.
  void SendNext() {
    in_.read(buffer_.data(), buffer_.size());
    chunk_.set_data(buffer_.data(), static_cast<size_t>(in_.gcount()));
    sent_ += in_.gcount();
    StartWrite(&chunk_);
  }

  grpc::CallbackServerContext* const context_;
  Store* const store_;
  std::string scratch_;  // the staged copy's path
  bool staged_ = false;
  std::ifstream in_;
  std::string buffer_;
  v1::BackupChunk chunk_;
  int64_t size_ = 0;
  int64_t sent_ = 0;
  int64_t revision_ = 0;
  int64_t variants_ = 0;
};

}  // namespace

grpc::ServerWriteReactor<v1::BackupChunk>* AdminService::Backup(
    grpc::CallbackServerContext* context,
    const v1::BackupRequest* /*request*/) {
  absl::StatusOr<Principal> caller =
      authorizer_->Authorize(*context, "Admin/Backup");
  if (!caller.ok()) {
    return new Refused<grpc::ServerWriteReactor<v1::BackupChunk>>(
        ToGrpcStatus(caller.status()));
  }
  return new BackupReactor(context, store_, *workers_, scratch_dir_);
}

grpc::ServerUnaryReactor* AdminService::CordonDevices(
    grpc::CallbackServerContext* context,
    const v1::CordonDevicesRequest* request,
    v1::CordonDevicesResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Admin/CordonDevices");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  return AnswerOnWorker(
      *workers_, context, [this, who = *std::move(who), request, response] {
        const v1::DeviceCordon& in = request->cordon();
        Cordon cordon;
        cordon.device = in.device();
        cordon.node = in.node();
        cordon.reason = in.reason();
        cordon.drain = in.drain();
        cordon.by = who.name;
        absl::StatusOr<Cordon> stored = cordons_->Put(std::move(cordon));
        if (!stored.ok()) {
          return ToGrpcStatus(
              RebaseFieldViolations(stored.status(), "", "cordon."));
        }
        spdlog::info("cordon: {} by {}{}: {}", stored->Key(), who.name,
                     stored->drain ? " (drain)" : "", stored->reason);
        CordonToProto(*stored, response->mutable_cordon());
        return grpc::Status::OK;
      });
}

grpc::ServerUnaryReactor* AdminService::UncordonDevices(
    grpc::CallbackServerContext* context,
    const v1::UncordonDevicesRequest* request,
    v1::UncordonDevicesResponse* /*response*/) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Admin/UncordonDevices");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  return AnswerOnWorker(
      *workers_, context, [this, who = *std::move(who), request] {
        absl::Status s = cordons_->Remove(request->device(), request->node());
        if (s.ok()) {
          spdlog::info("uncordon: {}{} by {}", request->device(),
                       request->node(), who.name);
        }
        return ToGrpcStatus(s);
      });
}

grpc::ServerUnaryReactor* AdminService::ListCordons(
    grpc::CallbackServerContext* context,
    const v1::ListCordonsRequest* /*request*/,
    v1::ListCordonsResponse* response) {
  absl::StatusOr<Principal> who =
      authorizer_->Authorize(*context, "Admin/ListCordons");
  if (!who.ok()) return Answer(context, ToGrpcStatus(who.status()));
  for (const Cordon& c : cordons_->List()) {
    CordonToProto(c, response->add_cordons());
  }
  return Answer(context, grpc::Status::OK);
}

}  // namespace ctxsel::server
