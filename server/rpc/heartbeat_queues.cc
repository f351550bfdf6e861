#include "server/rpc/heartbeat_queues.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/proto_time.h"
#include "base/status_details.h"
#include "server/rpc/callback_call.h"
#include "server/rpc/proto_convert.h"

namespace ctxsel::server {

v1::HeartbeatResponse HeartbeatAnswer(const std::string& node,
                                      Inventory::BeatAnswer answer,
                                      absl::Duration interval) {
  v1::HeartbeatResponse response;
  *response.mutable_heartbeat_interval() = ToProtoDuration(interval);
  if (answer == Inventory::BeatAnswer::kUnknownNode) {
    response.set_action(v1::HeartbeatResponse::ACTION_REREPORT);
    response.set_message(absl::StrCat("unknown node '", node, "': re-report"));
  } else if (answer == Inventory::BeatAnswer::kUnknownDevice) {
    response.set_action(v1::HeartbeatResponse::ACTION_REREPORT);
    response.set_message(absl::StrCat("node '", node,
                                      "' names a device it did not report: "
                                      "re-report"));
  }
  return response;
}

grpc::Status StaleReplicaStatus() {
  return ToGrpcStatus(WithErrorInfo(
      absl::UnavailableError(
          "this replica is stale (cut off from the store its replicas "
          "share, or the store has no quorum): report to another replica"),
      kReasonStoreUnavailable));
}

int DefaultHeartbeatQueues(int cores) { return std::clamp(cores / 4, 1, 8); }

struct HeartbeatQueues::Queue {
  InventoryServiceBase* service;
  const HeartbeatSettings* settings;
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  std::thread thread;
  // Held shared to start an operation on `cq`, exclusively to shut it down:
  // an operation started on a queue already shut down aborts the process.
  absl::Mutex mu;
  bool stopping ABSL_GUARDED_BY(mu) = false;

  // Handles every event of the queue until it is shut down and drained.
  void Run();
};

namespace {

// One agent's Heartbeat stream. It deletes itself once it has finished (or
// was never started) and no operation of its is in flight; other threads
// (a revocation) reach it through `link_` until then. One read or one write
// is in flight at a time, and a finish at most once.
class HeartbeatStream {
 public:
  // The operations whose completions the queue delivers; each is its own
  // tag, so that an event names its stream and its kind.
  enum class Kind { kArrived, kRead, kWrite, kFinish };
  struct Op {
    HeartbeatStream* stream;
    Kind kind;
  };

  // Waits on `queue` for the next Heartbeat call, with a stream of its own
  // (none if the queue is shutting down).
  static void WaitForCall(HeartbeatQueues::Queue* queue) {
    auto* stream = new HeartbeatStream(queue);
    bool waiting = false;
    {
      absl::MutexLock lock(&stream->link_->mu);
      waiting = stream->StartOp([&] {
        queue->service->RequestHeartbeat(&stream->context_, &stream->stream_,
                                         queue->cq.get(), queue->cq.get(),
                                         &stream->arrived_);
      });
      if (!waiting) stream->link_->reactor = nullptr;
    }
    // Waiting, it belongs to the queue's thread, which may have deleted it.
    if (!waiting) delete stream;
  }

  // An event of this stream's; may delete it.
  static void OnEvent(void* tag, bool ok) {
    Op* op = static_cast<Op*>(tag);
    op->stream->Handle(op->kind, ok);
  }

  // Ends the stream with RevokedStatus(); the caller holds the link's lock.
  void Revoke() {
    if (finished_) return;
    revoked_ = true;
    // A read in flight ends with the stream; a write is let complete first.
    if (!write_in_flight_) FinishOnce(RevokedStatus());
  }

 private:
  // True once the stream can be deleted; with the link's lock held.
  bool Done() const { return finished_ && ops_in_flight_ == 0; }

  explicit HeartbeatStream(HeartbeatQueues::Queue* queue)
      : queue_(queue), link_(std::make_shared<ReactorLink<HeartbeatStream>>()) {
    absl::MutexLock lock(&link_->mu);
    link_->reactor = this;
  }

  void Handle(Kind kind, bool ok) {
    // A call that arrived is authorized before the link's lock is taken: a
    // revocation takes the authorizer's lock and then the link's.
    std::optional<absl::StatusOr<Authorizer::StreamGrant>> grant;
    if (kind == Kind::kArrived && ok) {
      WaitForCall(queue_);
      grant.emplace(queue_->settings->authorizer->AuthorizeStream(
          context_, "Inventory/Heartbeat", RevokeThrough(link_)));
    }
    bool done = false;
    {
      absl::MutexLock lock(&link_->mu);
      --ops_in_flight_;
      switch (kind) {
        case Kind::kArrived:
          Arrived(std::move(grant));
          break;
        case Kind::kRead:
          if (finished_) break;
          if (!ok) {  // the agent closed the stream or went away
            FinishOnce(grpc::Status::OK);
            break;
          }
          HandleBeat();
          break;
        case Kind::kWrite:
          write_in_flight_ = false;
          if (finished_) break;
          if (revoked_) {
            FinishOnce(RevokedStatus());
          } else if (!ok) {
            FinishOnce(grpc::Status::OK);
          } else {
            StartRead();
          }
          break;
        case Kind::kFinish:
          break;
      }
      done = Done();
      if (done) link_->reactor = nullptr;
    }
    if (done) delete this;
  }

  // A call arrived and was authorized (`grant`), or the server is shutting
  // down (none).
  void Arrived(std::optional<absl::StatusOr<Authorizer::StreamGrant>> grant) {
    if (!grant.has_value()) {  // never started: nothing to finish
      finished_ = true;
      return;
    }
    // Revoked already (between authorizing and here): the finish is on its
    // way.
    if (finished_) return;
    last_beat_ = absl::Now();
    if (!grant->ok()) {
      FinishOnce(ToGrpcStatus(grant->status()));
      return;
    }
    grant_.emplace(**std::move(grant));
    StartRead();
  }

  void HandleBeat() {
    const HeartbeatSettings& settings = *queue_->settings;
    if (node_.empty()) node_ = beat_.node();
    if (beat_.node().empty() || beat_.node() != node_) {
      FinishOnce(ToGrpcStatus(FieldViolation(
          "node", absl::StrCat("'", beat_.node(),
                               "' (a heartbeat stream carries one non-empty "
                               "node, first '",
                               node_, "')"))));
      return;
    }
    if (absl::Status s = Authorizer::CheckNode(grant_->principal(), node_);
        !s.ok()) {
      FinishOnce(ToGrpcStatus(s));
      return;
    }
    if (absl::Status s =
            settings.authorizer->limits().Take(Budget::kHeartbeat, node_);
        !s.ok()) {
      FinishOnce(ToGrpcStatus(s));
      return;
    }
    if (settings.stale != nullptr && *settings.stale && (*settings.stale)()) {
      FinishOnce(StaleReplicaStatus());
      return;
    }
    // Assigned in place: once the stream has beaten, the ids' buffers are
    // reused and a beat allocates nothing here.
    utilisation_.resize(beat_.utilisation_size());
    for (int i = 0; i < beat_.utilisation_size(); ++i) {
      const v1::DeviceUtilisation& u = beat_.utilisation(i);
      utilisation_[i].first.assign(u.device_id());
      utilisation_[i].second = u.utilisation();
    }
    absl::StatusOr<Inventory::BeatAnswer> answer =
        settings.inventory->Heartbeat(node_, utilisation_);
    if (!answer.ok()) {
      FinishOnce(ToGrpcStatus(answer.status()));
      return;
    }
    if (settings.metrics != nullptr) {
      const absl::Time now = absl::Now();
      settings.metrics->RecordHeartbeat(
          *answer == Inventory::BeatAnswer::kRecorded,
          now - last_beat_ > settings.inventory->options().suspect_after);
      last_beat_ = now;
    }
    answer_ = HeartbeatAnswer(node_, *answer, settings.interval);
    if (StartOp([&] { stream_.Write(answer_, &write_); })) {
      write_in_flight_ = true;
    } else {
      finished_ = true;
    }
  }

  void StartRead() {
    if (!StartOp([&] { stream_.Read(&beat_, &read_); })) finished_ = true;
  }

  void FinishOnce(grpc::Status status) {
    if (finished_) return;
    finished_ = true;
    StartOp([&] { stream_.Finish(status, &finish_); });
  }

  // Runs `start`, which starts one operation on the queue, unless the
  // queue is shutting down (then the server has already cancelled the
  // call, and the stream is abandoned). With the link's lock held.
  template <typename Start>
  bool StartOp(Start start) {
    absl::ReaderMutexLock lock(&queue_->mu);
    if (queue_->stopping) return false;
    ++ops_in_flight_;
    start();
    return true;
  }

  HeartbeatQueues::Queue* const queue_;
  const std::shared_ptr<ReactorLink<HeartbeatStream>> link_;
  grpc::ServerContext context_;
  grpc::ServerAsyncReaderWriter<v1::HeartbeatResponse, v1::HeartbeatRequest>
      stream_{&context_};
  Op arrived_{this, Kind::kArrived};
  Op read_{this, Kind::kRead};
  Op write_{this, Kind::kWrite};
  Op finish_{this, Kind::kFinish};
  // Guarded by link_->mu (not annotated: the analysis cannot follow link_).
  // Set once the call arrived and its caller was authorized.
  std::optional<Authorizer::StreamGrant> grant_;
  // The stream's start or its previous beat: a beat later than the
  // inventory's suspect_after after it is counted late.
  absl::Time last_beat_;
  std::string node_;  // the node of the first beat
  v1::HeartbeatRequest beat_;
  v1::HeartbeatResponse answer_;
  std::vector<DeviceBeat> utilisation_;  // beat_'s, reused beat to beat
  int ops_in_flight_ = 0;
  bool write_in_flight_ = false;
  bool revoked_ = false;
  bool finished_ = false;
};

}  // namespace

void HeartbeatQueues::Queue::Run() {
  void* tag = nullptr;
  bool ok = false;
  while (cq->Next(&tag, &ok)) HeartbeatStream::OnEvent(tag, ok);
}

HeartbeatQueues::HeartbeatQueues(InventoryServiceBase* service,
                                 HeartbeatSettings settings, int queues)
    : settings_(std::move(settings)) {
  for (int i = 0; i < std::max(queues, 1); ++i) {
    auto queue = std::make_unique<Queue>();
    queue->service = service;
    queue->settings = &settings_;
    queues_.push_back(std::move(queue));
  }
}

HeartbeatQueues::~HeartbeatQueues() {
  if (!stopped_) Stop();
}

void HeartbeatQueues::AddTo(grpc::ServerBuilder& builder) {
  for (std::unique_ptr<Queue>& queue : queues_) {
    queue->cq = builder.AddCompletionQueue();
  }
}

void HeartbeatQueues::Start() {
  for (std::unique_ptr<Queue>& queue : queues_) {
    HeartbeatStream::WaitForCall(queue.get());
    queue->thread = std::thread([q = queue.get()] { q->Run(); });
  }
}

void HeartbeatQueues::Stop() {
  stopped_ = true;
  for (std::unique_ptr<Queue>& queue : queues_) {
    if (queue->cq == nullptr) continue;
    {
      absl::MutexLock lock(&queue->mu);
      queue->stopping = true;
      queue->cq->Shutdown();
    }
    if (queue->thread.joinable()) {
      queue->thread.join();
    } else {  // never started: drain here
      queue->Run();
    }
  }
}

}  // namespace ctxsel::server
