#include "agent/grpc_transport.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/error_reasons.h"
#include "base/grpc_status.h"
#include "base/proto_time.h"
#include "base/server_target.h"
#include "base/status_details.h"
#include "devices/device_proto.h"

namespace ctxsel::agent {
namespace {

constexpr int kMinConnectTimeoutMs = 2000;

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(timeout));
}

class GrpcHeartbeatStream : public HeartbeatStream {
 public:
  // `on_broken` runs when a beat fails; a beat whose answer has not come
  // `answer_timeout` after it was sent cancels the stream.
  GrpcHeartbeatStream(std::shared_ptr<v1::Inventory::Stub> stub,
                      std::function<void()> on_broken,
                      absl::Duration answer_timeout)
      : stub_(std::move(stub)),
        on_broken_(std::move(on_broken)),
        answer_timeout_(answer_timeout),
        stream_(stub_->Heartbeat(&context_)),
        watchdog_([this] { Watch(); }) {}

  ~GrpcHeartbeatStream() override {
    {
      absl::MutexLock lock(&mu_);
      closing_ = true;
    }
    watchdog_.join();
    context_.TryCancel();
    stream_->Finish().IgnoreError();
  }

  absl::StatusOr<BeatAnswer> Beat(
      const std::string& node,
      const std::vector<DeviceInfo>& devices) override {
    v1::HeartbeatRequest request;
    request.set_node(node);
    for (const DeviceInfo& d : devices) {
      v1::DeviceUtilisation* u = request.add_utilisation();
      u->set_device_id(d.id);
      u->set_utilisation(d.utilisation);
    }
    v1::HeartbeatResponse response;
    {
      absl::MutexLock lock(&mu_);
      answer_due_ = absl::Now() + answer_timeout_;
    }
    const bool answered = stream_->Write(request) && stream_->Read(&response);
    bool timed_out = false;
    {
      absl::MutexLock lock(&mu_);
      answer_due_ = absl::InfiniteFuture();
      timed_out = timed_out_;
    }
    if (!answered) {
      on_broken_();
      return absl::UnavailableError(
          timed_out ? absl::StrCat("heartbeat: no answer within ",
                                   absl::FormatDuration(answer_timeout_),
                                   " (the server may be paused or cut off)")
                    : "heartbeat stream broken");
    }
    BeatAnswer answer;
    answer.rereport =
        response.action() == v1::HeartbeatResponse::ACTION_REREPORT;
    answer.message = response.message();
    answer.heartbeat_interval =
        FromProtoDuration(response.heartbeat_interval());
    return answer;
  }

  void Cancel() override { context_.TryCancel(); }

 private:
  // A server that stops answering (SIGSTOP, a cut network) leaves the
  // connection open, and Read() would wait forever while the node expires
  // on every replica: the watchdog cancels the stream once the answer is
  // overdue, so the reporter reconnects, to another replica of a list.
  void Watch() {
    absl::MutexLock lock(&mu_);
    while (!closing_) {
      const absl::Time due = answer_due_;
      auto changed = [this, due]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return closing_ || answer_due_ != due;
      };
      if (mu_.AwaitWithDeadline(absl::Condition(&changed), due)) continue;
      timed_out_ = true;
      answer_due_ = absl::InfiniteFuture();
      context_.TryCancel();
    }
  }

  std::shared_ptr<v1::Inventory::Stub> stub_;
  std::function<void()> on_broken_;
  const absl::Duration answer_timeout_;
  grpc::ClientContext context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::HeartbeatRequest, v1::HeartbeatResponse>>
      stream_;
  absl::Mutex mu_;
  absl::Time answer_due_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool timed_out_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watchdog_;  // last: starts once the rest is built
};

// A stale replica's refusal (server/rpc/heartbeat_queues.h: StaleReplicaStatus).
bool RefusedAsStale(const absl::Status& status) {
  if (!absl::IsUnavailable(status)) return false;
  auto info = GetDetail<google::rpc::ErrorInfo>(status);
  return info.has_value() && info->reason() == kReasonStoreUnavailable;
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeAgentChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    absl::Duration max_reconnect) {
  grpc::ChannelArguments args;
  int max_ms = static_cast<int>(
      std::max<int64_t>(100, absl::ToInt64Milliseconds(max_reconnect)));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(100, max_ms));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_ms);
  // Also the connection attempt's timeout: not so short that a busy server's
  // handshake cannot finish.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinConnectTimeoutMs);
  return grpc::CreateCustomChannel(ServerTarget(address), credentials, args);
}

absl::Duration HeartbeatAnswerTimeout(absl::Duration heartbeat) {
  return std::clamp(2 * heartbeat, absl::Seconds(2), absl::Seconds(5));
}

GrpcInventoryTransport::GrpcInventoryTransport(ChannelFactory make_channel,
                                               std::string agent_version,
                                               absl::Duration rpc_timeout,
                                               absl::Duration answer_timeout,
                                               int replicas)
    : make_channel_(std::move(make_channel)),
      agent_version_(std::move(agent_version)),
      rpc_timeout_(rpc_timeout),
      answer_timeout_(answer_timeout == absl::ZeroDuration() ? rpc_timeout
                                                             : answer_timeout),
      replicas_(std::max(1, replicas)) {}

std::shared_ptr<v1::Inventory::Stub> GrpcInventoryTransport::Stub() {
  absl::MutexLock lock(&mu_);
  if (!stub_) stub_ = v1::Inventory::NewStub(make_channel_());
  return stub_;
}

void GrpcInventoryTransport::DropChannel() {
  absl::MutexLock lock(&mu_);
  stub_.reset();
}

absl::StatusOr<ReportAnswer> GrpcInventoryTransport::ReportNode(
    const std::string& node, const std::vector<DeviceInfo>& devices) {
  v1::ReportNodeRequest request;
  request.mutable_node()->set_id(node);
  request.mutable_node()->set_agent_version(agent_version_);
  for (const DeviceInfo& d : devices) {
    *request.mutable_node()->add_devices() = DeviceToProto(d);
  }
  v1::ReportNodeResponse response;
  for (int tried = 1;; ++tried) {
    grpc::ClientContext context;
    SetDeadline(context, rpc_timeout_);
    grpc::Status s = Stub()->ReportNode(&context, request, &response);
    if (s.ok()) break;
    DropChannel();
    absl::Status refused = FromGrpcStatus(s, "ReportNode");
    if (tried >= replicas_ || !RefusedAsStale(refused)) return refused;
  }
  ReportAnswer answer;
  answer.heartbeat_interval = FromProtoDuration(response.heartbeat_interval());
  answer.node_ttl = FromProtoDuration(response.node_ttl());
  answer.server_instance = response.server_instance();
  return answer;
}

std::unique_ptr<HeartbeatStream> GrpcInventoryTransport::OpenHeartbeat() {
  return std::make_unique<GrpcHeartbeatStream>(
      Stub(), [this] { DropChannel(); }, answer_timeout_);
}

absl::Status GrpcInventoryTransport::Deregister(const std::string& node) {
  v1::DeregisterRequest request;
  request.set_node(node);
  v1::DeregisterResponse response;
  grpc::ClientContext context;
  SetDeadline(context, rpc_timeout_);
  return FromGrpcStatus(Stub()->Deregister(&context, request, &response),
                        "Deregister");
}

}  // namespace ctxsel::agent
