// claims.h: launchers' claims on devices — the one place they are kept.
//
// A claim says "this device is mine until T": a Select with a claim picks
// a device that still has claim room (fewer live claims than its
// claim_capacity, 1 unless the device declares more) and records the claim
// in one step, under the book's lock, so concurrent launchers never get the
// same device beyond its capacity. A claim may instead hold a share of a
// device (Job::share: memory, a percentage of compute): the shares of one
// device add up to at most its memory and 100% of its compute, a device
// with shares is not claimed whole and a device claimed whole takes no
// share. The book checks that under its lock, against every claim it knows,
// and tells the store which claims it counted on the device
// (ClaimBatch::counted): with replicas on etcd, the store refuses the claim
// when another replica's claim on the device was not among them, and the
// book learns it and selects again. Claims are written through the Store
// (server/store/store.h) before the caller answers, loaded again at start (the
// expired ones dropped), and end when released or when the injected clock
// passes their expiry.
//
//   absl::StatusOr<std::unique_ptr<ClaimBook>> book = ClaimBook::Open(store);
//   absl::StatusOr<ClaimBook::Claimed> c =
//       (*book)->SelectAndClaim(placer, job, absl::Minutes(5), "alice@n1:42");
//   // c->claim.device == c->placement.choice.device.id
//   (*book)->Renew(c->claim.id, absl::Minutes(5));
//   (*book)->Release(c->claim.id);
//
// A claiming Select may also wait for room (SelectAndClaimOrWait): it then
// joins the book's WaitQueue (wait_queue.h: FIFO within a priority, a
// starvation bound) and is answered, on another thread, when a release, an
// expiry or a new device gives it a place. A release or an expiry retries
// the waiters in the queue's order before any new arrival sees the room
// (devices added, and releases by other replicas, at the next Tick): a waiter
// whose retry finds no room (no fitting device is free) stays where it is, and
// the next one is tried, so a waiter is passed over only for a device it cannot
// use. A waiter for several devices (Job::count) could still lose each device
// that frees to one-device waiters behind it: once the starvation bound has
// promoted it, the waiters behind it (and new calls that would wait) are not
// tried while it lacks room, so freed devices gather for it. A claiming
// Select that does not wait still takes free room at once. Waits are per book:
// with replicas on one store (server/replicas/), each replica queues and orders
// its own callers, and serves them when another replica's release reaches it.
//
// Thread safety: every method may be called from any thread.
#ifndef CTXSEL_SERVER_CLAIMS_CLAIMS_H_
#define CTXSEL_SERVER_CLAIMS_CLAIMS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/claims/wait_queue.h"
#include "server/model/model.h"
#include "server/placement/placement.h"
#include "server/placement/placer.h"
#include "server/store/store.h"

namespace ctxsel::server {

// One launcher's hold on one device.
struct Claim {
  std::string id;  // e.g. "c-5f1e0c2a9b3d4e67"
  std::string node;
  std::string device;  // the device id
  std::string holder;  // e.g. "alice@n1:42"
  absl::Time expires;  // whole milliseconds, as stored
  // The principal that made it (server/access/auth.h); only it or an admin may
  // renew or release it. Empty: made without authentication.
  std::string owner;
  // Which of the device's claim_capacity places it holds: the lowest free
  // one when made (ClaimRecord::slot); a share's places are numbered from
  // kFirstShareSlot, so that a store guarding places (etcd) keeps each
  // share's key apart from the whole device's.
  int slot = 0;
  // The part of the device it holds (Job::share); whole() for all of it.
  ClaimShare share;
};

inline constexpr int kFirstShareSlot = 1 << 20;

// A cap on live claims: those of one principal (`owner`), or of the holders
// that start with `holder_prefix` (e.g. one Slurm job's "slurm-42."). Zero:
// no cap. Device-hours are what the live claims still hold: the time left
// on each, summed; a new claim (or a renewal) counts its whole duration.
struct ClaimQuota {
  std::string owner;
  std::string holder_prefix;
  int max_claims = 0;
  double max_device_hours = 0;
};

struct ClaimOptions {
  // The longest claim (or renewal) a launcher may ask for.
  absl::Duration max_duration = absl::Hours(24);
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // New claim ids; the default draws "c-" and 16 random hex digits.
  std::function<std::string()> new_id;
  // The queue of SelectAndClaimOrWait.
  WaitQueueOptions queue;
  // The caps on a claim by `owner` for `holder` (every one that applies);
  // unset: none. Asked on each claim and renewal, under the book's lock, so
  // a reloaded tokens file applies to the next claim.
  std::function<std::vector<ClaimQuota>(const std::string& owner,
                                        const std::string& holder)>
      quotas;
  // Whether a live claim may be renewed; its error is Renew's (a drained
  // device: CordonBook::CheckRenewal). Unset: always.
  std::function<absl::Status(const Claim&)> may_renew;
};

class ClaimBook {
 public:
  // Loads `store`'s claims; expired ones are deleted from it. `store` must
  // outlive the book. The store's errors as they are.
  static absl::StatusOr<std::unique_ptr<ClaimBook>> Open(
      Store* store, ClaimOptions options = {});

  struct Claimed {
    placement::Placement placement;
    Claim claim;  // on placement.choice.device
    // With Job::count > 1: one claim per rank (placement.ranks), in rank
    // order, made together; rank_claims[0] == claim. Empty otherwise.
    std::vector<Claim> rank_claims;
    // How long it waited in the queue (SelectAndClaimOrWait); 0 otherwise.
    absl::Duration waited;
  };

  // placer.Select(job) among the devices with claim room, and a claim on
  // the device it picks for `duration`, as one step; the claim is durable
  // when this returns OK. Errors: Select's; InvalidArgumentError for
  // claim.duration (not positive, above the limit) or an empty
  // claim.holder; ResourceExhaustedError with reason CLAIM_QUOTA_EXCEEDED
  // when the claim would take its owner or holder past a ClaimQuota
  // (checked before the pick, never queued); ResourceExhaustedError when
  // every fitting device is claimed: "all 8 fitting devices are claimed; the
  // first claim expires at 2024-05-01T10:00:00Z (in 42s)"; the store's error
  // (nothing claimed). When the store says another server took the place,
  // or holds a claim on the device the book did not count (ABORTED), the
  // book learns those claims (Store::ClaimsHolding, else Store::CatchUp) and
  // selects again, eight attempts at most.
  absl::StatusOr<Claimed> SelectAndClaim(const placement::Placer& placer,
                                         const Job& job,
                                         absl::Duration duration,
                                         const std::string& holder,
                                         const std::string& owner = "");

  // How a claiming Select waits when every fitting device is claimed.
  struct WaitFor {
    absl::Duration wait;  // > 0, at most ClaimOptions::max_duration
    int priority = 0;     // 0..kMaxPriority; higher is served first
  };
  static constexpr int kMaxPriority = 9;
  using ClaimDone = absl::AnyInvocable<void(absl::StatusOr<Claimed>)>;

  // SelectAndClaim, except that when every fitting device is claimed the
  // call joins the queue for up to wait.wait instead of failing. `done`
  // gets the answer exactly once, never under the book's lock: before this
  // returns when the answer is immediate (then 0 is returned), otherwise
  // later on the thread that ends the wait (a release, Tick, CancelWaiter),
  // and the waiter's id (> 0) is returned. Errors as SelectAndClaim's, and:
  // InvalidArgumentError for wait.wait or wait.priority out of range;
  // ResourceExhaustedError with reason CLAIM_QUEUE_FULL when the queue is
  // full, with reason CLAIM_WAIT_EXPIRED when the wait ran out; an error of
  // Select's that a retry meets (the kernel was deleted) ends the wait.
  // `placer` must outlive the wait.
  uint64_t SelectAndClaimOrWait(const placement::Placer& placer, const Job& job,
                                absl::Duration duration,
                                const std::string& holder,
                                const std::string& owner, WaitFor wait,
                                ClaimDone done);

  // Ends waiter `id`'s wait with `status` (its call was cancelled); nothing
  // when it no longer waits.
  void CancelWaiter(uint64_t id, absl::Status status);

  // Drops the expired claims, ends the waits that ran out, and retries the
  // waiters when room was freed since (an expiry, a release by another
  // replica) or `fleet_changed` (devices were added). The server's
  // housekeeping calls it every tick (at most a second), which bounds how
  // late a wait ends and how late an expiry serves a waiter.
  void Tick(bool fleet_changed = false);

  // The waiters in the order they are served.
  std::vector<Waiter> Waiters() const;
  int waiter_count() const;

  // The live claim `id`; NotFoundError as for Renew.
  absl::StatusOr<Claim> Find(const std::string& id) const;

  // The claim then expires `duration` from now. NotFoundError for a claim
  // that is unknown, released or expired; InvalidArgumentError for
  // `duration` as above; CLAIM_QUOTA_EXCEEDED when the longer claim passes
  // its owner's or holder's device-hours; ClaimOptions::may_renew's error
  // (a drained device: the claim is left to expire).
  absl::StatusOr<Claim> Renew(const std::string& id, absl::Duration duration);

  // Ends a claim now. NotFoundError as for Renew.
  absl::Status Release(const std::string& id);

  // Ends every live claim of `holder` (ClaimRequest.holder, e.g.
  // "slurm-42.0") in one store write and says how many; 0 when it has
  // none. All or nothing: PermissionDeniedError, naming the claim and its
  // owner, when `may_release` refuses one of them.
  absl::StatusOr<int> ReleaseHolder(
      const std::string& holder,
      const std::function<bool(const Claim&)>& may_release);

  // The live claims on `node`'s devices (empty: every node), by device id
  // then claim id.
  std::vector<Claim> List(absl::string_view node) const;

  // A claim made, renewed (`record`) or ended (`id`) by another server that
  // shares the store (server/replicas/replica_sync.h); nothing is written back.
  void ApplyStored(const ClaimRecord& record);
  void ApplyStoredDelete(const std::string& id);

  // Claims dropped because they expired (not released), since Open; for
  // metrics.
  int64_t expired_count() const { return expired_.load(); }

 private:
  class Room;  // the ClaimCheck a claiming Select asks
  // A waiting call: what to retry and whom to answer.
  struct Pending {
    const placement::Placer* placer;
    Job job;
    absl::Duration duration;
    std::string holder;
    std::string owner;
    ClaimDone done;
    absl::Status last;  // its latest RESOURCE_EXHAUSTED
  };
  // Answers to give once the lock is released.
  using Ready = std::vector<std::pair<ClaimDone, absl::StatusOr<Claimed>>>;
  static void Answer(Ready ready);

  ClaimBook(Store* store, ClaimOptions options);
  absl::Status CheckClaim(absl::Duration duration,
                          const std::string& holder) const;
  // One attempt of SelectAndClaim under the lock; when `wait` is set and
  // every fitting device is claimed, the caller joins the queue instead:
  // `*waiter` is its id and the status is unspecified.
  absl::StatusOr<Claimed> TrySelectAndClaim(
      const placement::Placer& placer, const Job& job, absl::Duration duration,
      const std::string& holder, const std::string& owner, bool* learned,
      const WaitFor* wait = nullptr, ClaimDone* done = nullptr,
      uint64_t* waiter = nullptr, Ready* ready = nullptr);
  absl::StatusOr<int> ReleaseHolderImpl(
      const std::string& holder,
      const std::function<bool(const Claim&)>& may_release, Ready* ready);
  absl::StatusOr<Claimed> SelectLocked(const placement::Placer& placer,
                                       const Job& job, absl::Duration duration,
                                       const std::string& holder,
                                       const std::string& owner, absl::Time now,
                                       ClaimBatch batch, bool* learned)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // CLAIM_QUOTA_EXCEEDED when `claims` more claims of `duration` by `owner`
  // for `holder` (besides `renewing`, a claim id being renewed, not counted
  // twice) pass a cap of ClaimOptions::quotas.
  absl::Status CheckQuotaLocked(const std::string& owner,
                                const std::string& holder, int claims,
                                absl::Duration duration, absl::Time now,
                                const std::string& renewing = "") const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Retries the waiters in the queue's order (see the file comment).
  void ServeLocked(absl::Time now, Ready* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the expired claims (written to the store) and, when it dropped
  // some, serves the waiters.
  void ExpireLocked(absl::Time now, Ready* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lowest place on `device` no known claim holds, from 0 for the
  // whole device, from kFirstShareSlot for a share.
  int FreeSlot(const std::string& device, const ClaimShare& share) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the known claims hold of `device`.
  struct Held {
    int whole = 0;              // claims of the whole device (places)
    int shares = 0;             // claims of a share
    uint64_t memory_bytes = 0;  // the shares' sums
    int32_t compute_percent = 0;
  };
  Held HeldOn(const std::string& device) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckDuration(absl::Duration duration,
                             absl::string_view field) const;
  // The live claim `id`, or NotFoundError.
  absl::StatusOr<Claim*> FindLive(const std::string& id, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Insert(Claim claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Erase(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the claims expired at `now`; their ids go into `batch` for the
  // store.
  void DropExpired(absl::Time now, ClaimBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `refused` (CLAIMS_EXHAUSTED) with when the earliest claim on one of
  // `devices` expires: in its message ("; the first claim expires at T (in
  // Xs)") and as ErrorInfo metadata first_expiry (RFC 3339).
  absl::Status WithFirstExpiry(absl::Status refused,
                               const std::set<std::string>& devices,
                               absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store* const store_;
  const ClaimOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Claim> by_id_ ABSL_GUARDED_BY(mu_);
  // The claims (live or expired but not yet dropped) per device, slot ->
  // claim id; their number is the device's claim count.
  absl::flat_hash_map<std::string, std::multimap<int, std::string>> held_
      ABSL_GUARDED_BY(mu_);
  // The sums of the shares held per device (devices with shares only).
  absl::flat_hash_map<std::string, ClaimShare> shared_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<absl::Time, std::string>> by_expiry_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> expired_{0};
  WaitQueue queue_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  // Room was freed where no waiter was retried (ApplyStoredDelete): the
  // next Tick retries them.
  bool freed_ ABSL_GUARDED_BY(mu_) = false;
  // A promoted waiter of several devices found too few free (ServeLocked):
  // the waiters behind it, and new calls that would wait, are not tried
  // until the next ServeLocked, so the devices that free up gather for it.
  bool reserved_ ABSL_GUARDED_BY(mu_) = false;
};

// The stored form of a claim and back.
ClaimRecord ClaimToRecord(const Claim& claim);
Claim ClaimFromRecord(const ClaimRecord& record);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_CLAIMS_CLAIMS_H_
