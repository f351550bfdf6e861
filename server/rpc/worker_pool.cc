#include "server/rpc/worker_pool.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel::server {

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(options) {
  threads_.reserve(options_.threads);
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

absl::Status WorkerPool::Submit(absl::AnyInvocable<void()> work) {
  absl::MutexLock lock(&mu_);
  if (static_cast<int>(queue_.size()) >= options_.max_queued) {
    return WithErrorInfo(
        absl::ResourceExhaustedError(absl::StrCat(
            "the server is busy: ", queue_.size(),
            " calls already wait for one of its ", options_.threads,
            " worker threads (--max_threads); retry later")),
        kReasonServerBusy, {{"threads", absl::StrCat(options_.threads)}});
  }
  queue_.push_back(std::move(work));
  return absl::OkStatus();
}

void WorkerPool::Run() {
  while (true) {
    absl::AnyInvocable<void()> work;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WorkerPool::HasWork));
      if (queue_.empty()) return;  // stopping, and nothing left to run
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

}  // namespace ctxsel::server
