#include "server/claims/wait_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error_reasons.h"
#include "base/status_details.h"

namespace ctxsel::server {

absl::StatusOr<uint64_t> WaitQueue::Push(Waiter waiter) {
  if (size() >= options_.max_waiters) {
    return WithErrorInfo(
        absl::ResourceExhaustedError(absl::StrCat(
            "claim.wait: the server's claim queue is full (",
            options_.max_waiters, " waiters); retry later or without wait")),
        kReasonClaimQueueFull,
        {{"max_waiters", absl::StrCat(options_.max_waiters)}});
  }
  waiter.id = next_id_++;
  waiter.overtaken = 0;
  waiter.promoted = false;
  order_.insert(KeyOf(waiter));
  const uint64_t id = waiter.id;
  by_id_.emplace(id, std::move(waiter));
  return id;
}

std::vector<uint64_t> WaitQueue::Order() const {
  std::vector<uint64_t> ids;
  ids.reserve(order_.size());
  for (const Key& key : order_) ids.push_back(std::get<2>(key));
  return ids;
}

bool WaitQueue::Served(uint64_t id) {
  if (!Remove(id)) return false;
  // by_id_ is in arrival order: the waiters before `id` joined before it.
  for (auto it = by_id_.begin(); it != by_id_.end() && it->first < id; ++it) {
    Waiter& w = it->second;
    if (w.promoted || ++w.overtaken < options_.max_overtakes) continue;
    order_.erase(KeyOf(w));
    w.promoted = true;
    order_.insert(KeyOf(w));
  }
  return true;
}

bool WaitQueue::Remove(uint64_t id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  order_.erase(KeyOf(it->second));
  by_id_.erase(it);
  return true;
}

std::vector<uint64_t> WaitQueue::ExpiredAt(absl::Time now) const {
  std::vector<uint64_t> ids;
  for (const auto& [id, w] : by_id_) {
    if (w.deadline <= now) ids.push_back(id);
  }
  return ids;
}

const Waiter* WaitQueue::Find(uint64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::vector<Waiter> WaitQueue::List() const {
  std::vector<Waiter> out;
  out.reserve(order_.size());
  for (const Key& key : order_) out.push_back(by_id_.at(std::get<2>(key)));
  return out;
}

}  // namespace ctxsel::server
