// wait_queue.h: the order in which claiming Selects that found every fitting
// device claimed are served (ClaimRequest.wait) — FIFO within a priority,
// higher priorities first, with a starvation bound. It holds no calls and
// no threads: ClaimBook (claims.h) keeps each waiter's job and answer by the
// id Push returns, and asks Order() whom to try when room frees.
//
// The starvation bound: every time a waiter is served while waiters that
// joined before it still wait, each of those counts one overtake; a waiter
// overtaken `max_overtakes` times is promoted and from then on ranks ahead
// of every waiter not promoted (promoted ones among themselves by arrival).
// So once promoted, a waiter is passed over only for a device it cannot use.
//
//   WaitQueue queue({.max_waiters = 1024, .max_overtakes = 16});
//   absl::StatusOr<uint64_t> id = queue.Push({.priority = 0, ...});
//   for (uint64_t next : queue.Order()) { ...; queue.Served(next); }
//
// Thread safety: none; ClaimBook calls it under its lock.
#ifndef CTXSEL_SERVER_CLAIMS_WAIT_QUEUE_H_
#define CTXSEL_SERVER_CLAIMS_WAIT_QUEUE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ctxsel::server {

struct WaitQueueOptions {
  // Waiters beyond this are refused (CLAIM_QUEUE_FULL).
  int max_waiters = 1024;
  // The starvation bound (above).
  int max_overtakes = 16;
};

// What the queue and its listing know of one waiter.
struct Waiter {
  uint64_t id = 0;  // set by Push: arrival order
  int priority = 0;
  std::string kernel;
  std::string holder;
  absl::Time since;     // when it joined
  absl::Time deadline;  // when its wait runs out
  int overtaken = 0;
  bool promoted = false;
};

class WaitQueue {
 public:
  explicit WaitQueue(WaitQueueOptions options = {}) : options_(options) {}

  // Adds `waiter` behind every waiter of its priority; its id. A
  // ResourceExhaustedError with reason CLAIM_QUEUE_FULL when max_waiters
  // already wait.
  absl::StatusOr<uint64_t> Push(Waiter waiter);

  // The ids in the order they are served.
  std::vector<uint64_t> Order() const;

  // Removes `id`, served: the waiters that joined before it count one
  // overtake (and may be promoted). False for an id not waiting.
  bool Served(uint64_t id);
  // Removes `id` unserved (cancelled, or its wait ran out). False for an id
  // not waiting.
  bool Remove(uint64_t id);

  // The waiters whose deadline is at or before `now`.
  std::vector<uint64_t> ExpiredAt(absl::Time now) const;

  const Waiter* Find(uint64_t id) const;
  // Every waiter, in the order they are served.
  std::vector<Waiter> List() const;
  int size() const { return static_cast<int>(by_id_.size()); }
  bool empty() const { return by_id_.empty(); }

 private:
  // Promoted first (by arrival, whatever their priority), then higher
  // priority, then arrival.
  using Key = std::tuple<bool, int, uint64_t>;
  static Key KeyOf(const Waiter& w) {
    return {!w.promoted, w.promoted ? 0 : -w.priority, w.id};
  }

  const WaitQueueOptions options_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Waiter> by_id_;
  std::set<Key> order_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_CLAIMS_WAIT_QUEUE_H_
