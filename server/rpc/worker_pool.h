// worker_pool.h: the threads that run the handlers which wait — on the
// disk or on etcd (store writes, claims, backups) — so that gRPC's callback
// threads, which every call and stream shares, never do. Only callers that
// were authorized reach it (handlers authorize on gRPC's thread first), and
// its queue is bounded, so an unauthenticated client cannot fill it and an
// authenticated flood is refused rather than queued without end.
//
//   WorkerPool workers({.threads = 16, .max_queued = 256});
//   absl::Status queued = workers.Submit([=] { ...; reactor->Finish(s); });
//   if (!queued.ok()) reactor->Finish(ToGrpcStatus(queued));
#ifndef CTXSEL_SERVER_RPC_WORKER_POOL_H_
#define CTXSEL_SERVER_RPC_WORKER_POOL_H_

#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace ctxsel::server {

struct WorkerPoolOptions {
  int threads = 16;
  // Work waiting for a thread beyond this is refused.
  int max_queued = 256;
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolOptions options);
  // Runs what is queued, then joins the threads.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `work` to run on one of the threads. ResourceExhaustedError,
  // and `work` is dropped unrun, when max_queued pieces already wait.
  absl::Status Submit(absl::AnyInvocable<void()> work);

 private:
  void Run();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  }

  const WorkerPoolOptions options_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_WORKER_POOL_H_
