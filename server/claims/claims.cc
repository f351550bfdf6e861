#include "server/claims/claims.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/error_reasons.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "server/model/names.h"

namespace ctxsel::server {
namespace {

std::string RandomClaimId() {
  thread_local absl::BitGen bits;
  return absl::StrFormat("c-%016x", absl::Uniform<uint64_t>(bits));
}

// Stored times are whole milliseconds; keep memory the same.
absl::Time WholeMillis(absl::Time t) {
  return absl::FromUnixMillis(absl::ToUnixMillis(t));
}

absl::Status NotFound(const std::string& id) {
  return WithErrorInfo(
      absl::NotFoundError(absl::StrCat("claim_id: '", id,
                                       "' is not a live claim (unknown, "
                                       "released or expired)")),
      kReasonClaimNotFound, {{"claim_id", id}});
}

}  // namespace

ClaimRecord ClaimToRecord(const Claim& claim) {
  return {claim.id,
          claim.node,
          claim.device,
          claim.holder,
          absl::ToUnixMillis(claim.expires),
          claim.owner,
          claim.slot,
          claim.share.memory_bytes,
          claim.share.compute_percent};
}

Claim ClaimFromRecord(const ClaimRecord& record) {
  return {record.id,
          record.node,
          record.device,
          record.holder,
          absl::FromUnixMillis(record.expires_unix_ms),
          record.owner,
          record.slot,
          {record.memory_bytes, record.compute_percent}};
}

// Answers the Placer's question for one SelectAndClaim, under the book's
// lock, and remembers the devices it refused for the RESOURCE_EXHAUSTED
// message.
class ClaimBook::Room : public placement::ClaimCheck {
 public:
  Room(const ClaimBook& book, const ClaimShare& share)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(book.mu_)
      : book_(book), share_(share) {}
  bool HasRoom(const std::string& device_id,
               const DeviceProperties& device) const override
      ABSL_NO_THREAD_SAFETY_ANALYSIS {  // the constructor's caller holds mu_
    const Held held = book_.HeldOn(device_id);
    const bool room =
        share_.whole()
            ? held.shares == 0 && held.whole < device.claim_capacity
            : held.whole == 0 && share_.memory_bytes <= device.memory_bytes &&
                  held.memory_bytes <=
                      device.memory_bytes - share_.memory_bytes &&
                  held.compute_percent + share_.compute_percent <= 100;
    if (!room) refused_.insert(device_id);
    return room;
  }
  const std::set<std::string>& refused() const { return refused_; }

 private:
  const ClaimBook& book_;
  const ClaimShare share_;
  mutable std::set<std::string> refused_;
};

ClaimBook::ClaimBook(Store* store, ClaimOptions options)
    : store_(store), options_(std::move(options)), queue_(options_.queue) {}

absl::StatusOr<std::unique_ptr<ClaimBook>> ClaimBook::Open(
    Store* store, ClaimOptions options) {
  if (!options.new_id) options.new_id = RandomClaimId;
  std::unique_ptr<ClaimBook> book(new ClaimBook(store, std::move(options)));
  CTXSEL_ASSIGN_OR_RETURN(std::vector<ClaimRecord> records,
                          store->LoadClaims());
  absl::MutexLock lock(&book->mu_);
  for (const ClaimRecord& record : records) {
    book->Insert(ClaimFromRecord(record));
  }
  ClaimBatch expired;
  book->DropExpired(book->options_.now(), &expired);
  if (!expired.expired.empty()) {
    CTXSEL_RETURN_IF_ERROR(store->ApplyClaims(expired));
  }
  return book;
}

absl::Status ClaimBook::CheckDuration(absl::Duration duration,
                                      absl::string_view field) const {
  if (duration <= absl::ZeroDuration() || duration > options_.max_duration) {
    return FieldViolation(
        field, absl::StrCat(absl::FormatDuration(duration),
                            " (must be > 0 and at most ",
                            absl::FormatDuration(options_.max_duration), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Claim*> ClaimBook::FindLive(const std::string& id,
                                           absl::Time now) {
  auto it = by_id_.find(id);
  if (it == by_id_.end() || it->second.expires <= now) return NotFound(id);
  return &it->second;
}

int ClaimBook::FreeSlot(const std::string& device,
                        const ClaimShare& share) const {
  auto it = held_.find(device);
  int slot = share.whole() ? 0 : kFirstShareSlot;
  if (it == held_.end()) return slot;
  while (it->second.count(slot) > 0) ++slot;
  return slot;
}

ClaimBook::Held ClaimBook::HeldOn(const std::string& device) const {
  Held held;
  auto it = held_.find(device);
  if (it == held_.end()) return held;
  const auto first_share = it->second.lower_bound(kFirstShareSlot);
  held.whole = static_cast<int>(std::distance(it->second.begin(), first_share));
  held.shares = static_cast<int>(it->second.size()) - held.whole;
  if (auto s = shared_.find(device); s != shared_.end()) {
    held.memory_bytes = s->second.memory_bytes;
    held.compute_percent = s->second.compute_percent;
  }
  return held;
}

void ClaimBook::Insert(Claim claim) {
  if (!claim.share.whole()) {
    // A store that keeps no places (SQLite) loads every claim at place 0.
    if (claim.slot < kFirstShareSlot) {
      claim.slot = FreeSlot(claim.device, claim.share);
    }
    ClaimShare& sum = shared_[claim.device];
    sum.memory_bytes += claim.share.memory_bytes;
    sum.compute_percent += claim.share.compute_percent;
  }
  held_[claim.device].emplace(claim.slot, claim.id);
  by_expiry_.emplace(claim.expires, claim.id);
  std::string id = claim.id;
  by_id_[id] = std::move(claim);
}

void ClaimBook::Erase(const std::string& id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const Claim& claim = it->second;
  by_expiry_.erase({claim.expires, claim.id});
  auto held = held_.find(claim.device);
  auto [first, last] = held->second.equal_range(claim.slot);
  held->second.erase(std::find_if(first, last, [&](const auto& slot_id) {
    return slot_id.second == claim.id;
  }));
  if (held->second.empty()) held_.erase(held);
  if (!claim.share.whole()) {
    auto sum = shared_.find(claim.device);
    sum->second.memory_bytes -= claim.share.memory_bytes;
    sum->second.compute_percent -= claim.share.compute_percent;
    if (sum->second.whole()) shared_.erase(sum);
  }
  by_id_.erase(it);
}

void ClaimBook::DropExpired(absl::Time now, ClaimBatch* batch) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    std::string id = by_expiry_.begin()->second;
    Erase(id);
    batch->expired.push_back(std::move(id));
    expired_.fetch_add(1);
  }
}

absl::Status ClaimBook::WithFirstExpiry(absl::Status refused,
                                        const std::set<std::string>& devices,
                                        absl::Time now) const {
  for (const auto& [expires, id] : by_expiry_) {
    if (!devices.count(by_id_.at(id).device)) continue;
    const std::string at =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expires, absl::UTCTimeZone());
    return WithErrorInfo(
        WithMessage(refused,
                    absl::StrCat(refused.message(),
                                 "; the first claim expires at ", at, " (in ",
                                 absl::FormatDuration(absl::Ceil(
                                     expires - now, absl::Seconds(1))),
                                 ")")),
        kReasonClaimsExhausted, {{"first_expiry", at}});
  }
  return refused;
}

absl::Status ClaimBook::CheckQuotaLocked(const std::string& owner,
                                         const std::string& holder, int claims,
                                         absl::Duration duration,
                                         absl::Time now,
                                         const std::string& renewing) const {
  if (!options_.quotas) return absl::OkStatus();
  for (const ClaimQuota& q : options_.quotas(owner, holder)) {
    const bool by_owner = q.holder_prefix.empty();
    int live = 0;
    double hours = 0;
    for (const auto& [id, claim] : by_id_) {
      if (claim.expires <= now || id == renewing) continue;
      if (by_owner ? claim.owner != q.owner
                   : !absl::StartsWith(claim.holder, q.holder_prefix)) {
        continue;
      }
      ++live;
      hours += absl::ToDoubleHours(claim.expires - now);
    }
    const double asked = claims * absl::ToDoubleHours(duration);
    const std::string who =
        by_owner ? absl::StrCat("principal '", q.owner, "'")
                 : absl::StrCat("holders '", q.holder_prefix, "*'");
    std::string over;
    if (q.max_claims > 0 && live + claims > q.max_claims) {
      over = absl::StrCat(who, " holds ", live, " live claims of at most ",
                          q.max_claims);
    } else if (q.max_device_hours > 0 && hours + asked > q.max_device_hours) {
      over = absl::StrFormat(
          "%s holds %.2f device-hours and asks %.2f more, of at most %g", who,
          hours, asked, q.max_device_hours);
    }
    if (over.empty()) continue;
    return WithErrorInfo(
        absl::ResourceExhaustedError(
            absl::StrCat("claim quota: ", over,
                         " (tokens file; release or let claims expire first)")),
        kReasonClaimQuotaExceeded,
        {{"scope", by_owner ? "principal" : "holder_prefix"},
         {"name", by_owner ? q.owner : q.holder_prefix},
         {"max_claims", absl::StrCat(q.max_claims)},
         {"max_device_hours", absl::StrCat(q.max_device_hours)}});
  }
  return absl::OkStatus();
}

absl::Status ClaimBook::CheckClaim(absl::Duration duration,
                                   const std::string& holder) const {
  CTXSEL_RETURN_IF_ERROR(CheckDuration(duration, "claim.duration"));
  // The names rule: a holder is printed in `claims ls`, and a control
  // character there would reach an admin's terminal.
  return ValidateName(holder, "claim.holder");
}

void ClaimBook::Answer(Ready ready) {
  for (auto& [done, answer] : ready) done(std::move(answer));
}

absl::StatusOr<ClaimBook::Claimed> ClaimBook::SelectAndClaim(
    const placement::Placer& placer, const Job& job, absl::Duration duration,
    const std::string& holder, const std::string& owner) {
  CTXSEL_RETURN_IF_ERROR(CheckClaim(duration, holder));
  // A store that other servers write refuses a place one of them took
  // since this book last heard from it (ABORTED): TrySelectAndClaim learns
  // who holds it, and the next attempt picks another place. Every attempt
  // learns at least one claim, or catches up with the store.
  constexpr int kAttempts = 8;
  for (int attempt = 1;; ++attempt) {
    bool learned = false;
    absl::StatusOr<Claimed> claimed =
        TrySelectAndClaim(placer, job, duration, holder, owner, &learned);
    if (!absl::IsAborted(claimed.status()) || attempt == kAttempts) {
      return claimed;
    }
    if (!learned) store_->CatchUp();
  }
}

uint64_t ClaimBook::SelectAndClaimOrWait(const placement::Placer& placer,
                                         const Job& job,
                                         absl::Duration duration,
                                         const std::string& holder,
                                         const std::string& owner, WaitFor wait,
                                         ClaimDone done) {
  absl::Status valid = CheckClaim(duration, holder);
  if (valid.ok()) valid = CheckDuration(wait.wait, "claim.wait");
  if (valid.ok() && (wait.priority < 0 || wait.priority > kMaxPriority)) {
    valid = FieldViolation(
        "claim.priority",
        absl::StrCat(wait.priority, " (must be 0 to ", kMaxPriority, ")"));
  }
  if (!valid.ok()) {
    done(valid);
    return 0;
  }
  constexpr int kAttempts = 8;  // as SelectAndClaim's
  for (int attempt = 1;; ++attempt) {
    bool learned = false;
    uint64_t waiter = 0;
    Ready ready;
    absl::StatusOr<Claimed> claimed =
        TrySelectAndClaim(placer, job, duration, holder, owner, &learned, &wait,
                          &done, &waiter, &ready);
    Answer(std::move(ready));
    if (waiter != 0) return waiter;
    if (!absl::IsAborted(claimed.status()) || attempt == kAttempts) {
      done(std::move(claimed));
      return 0;
    }
    if (!learned) store_->CatchUp();
  }
}

absl::StatusOr<ClaimBook::Claimed> ClaimBook::TrySelectAndClaim(
    const placement::Placer& placer, const Job& job, absl::Duration duration,
    const std::string& holder, const std::string& owner, bool* learned,
    const WaitFor* wait, ClaimDone* done, uint64_t* waiter, Ready* ready) {
  Ready expired_ready;
  if (ready == nullptr) ready = &expired_ready;
  absl::StatusOr<Claimed> claimed = absl::UnknownError("");
  {
    // Held across the pick and the write: no other claim can take the room
    // this Select saw, and no claim is visible before it is durable.
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.now();
    // What expired goes to the waiters first.
    ExpireLocked(now, ready);
    absl::Status quota =
        CheckQuotaLocked(owner, holder, job.count, duration, now);
    if (!quota.ok()) {
      claimed = quota;  // never queued: waiting does not lift one's own cap
    } else if (wait != nullptr && reserved_) {
      // A promoted waiter keeps what frees up: behind it in the queue.
      claimed = absl::ResourceExhaustedError(
          "the devices that free up are kept for a promoted waiter ahead");
    } else {
      claimed =
          SelectLocked(placer, job, duration, holder, owner, now, {}, learned);
    }
    if (wait != nullptr && quota.ok() &&
        absl::IsResourceExhausted(claimed.status())) {
      Waiter w;
      w.priority = wait->priority;
      w.kernel = job.kernel;
      w.holder = holder;
      w.since = now;
      w.deadline = now + wait->wait;
      absl::StatusOr<uint64_t> id = queue_.Push(std::move(w));
      if (!id.ok()) {
        claimed = id.status();
      } else {
        pending_.emplace(*id, Pending{&placer, job, duration, holder, owner,
                                      std::move(*done), claimed.status()});
        *waiter = *id;
      }
    }
  }
  Answer(std::move(expired_ready));
  return claimed;
}

void ClaimBook::ExpireLocked(absl::Time now, Ready* ready) {
  ClaimBatch batch;
  DropExpired(now, &batch);
  if (batch.expired.empty()) return;
  store_->ApplyClaims(batch).IgnoreError();
  ServeLocked(now, ready);
}

void ClaimBook::ServeLocked(absl::Time now, Ready* ready) {
  freed_ = false;
  reserved_ = false;
  for (uint64_t id : queue_.Order()) {
    Pending& p = pending_.at(id);
    // Over its owner's cap (it claimed more since it queued): it waits for
    // its own claims to end.
    const absl::Status quota =
        CheckQuotaLocked(p.owner, p.holder, p.job.count, p.duration, now);
    absl::StatusOr<Claimed> claimed =
        quota.ok() ? absl::UnknownError("not tried") : quota;
    for (int attempt = 0; attempt < 3 && quota.ok(); ++attempt) {
      bool learned = false;
      claimed = SelectLocked(*p.placer, p.job, p.duration, p.holder, p.owner,
                             now, {}, &learned);
      if (!absl::IsAborted(claimed.status()) || !learned) break;
    }
    // No fitting device has room (or another server took it): it keeps
    // its place, and the next waiter is tried.
    if (absl::IsResourceExhausted(claimed.status()) ||
        absl::IsAborted(claimed.status())) {
      if (absl::IsResourceExhausted(claimed.status())) {
        p.last = claimed.status();
      }
      // The starvation bound for a waiter of several devices: once
      // promoted it would still lose every device that frees to the
      // one-device waiters behind it, so those wait until it is served.
      if (quota.ok() && p.job.count > 1 && queue_.Find(id)->promoted) {
        reserved_ = true;
        break;
      }
      continue;
    }
    if (claimed.ok()) {
      claimed->waited = now - queue_.Find(id)->since;
      queue_.Served(id);
    } else {
      queue_.Remove(id);
    }
    ready->emplace_back(std::move(p.done), std::move(claimed));
    pending_.erase(id);
  }
}

void ClaimBook::CancelWaiter(uint64_t id, absl::Status status) {
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    queue_.Remove(id);
    freed_ |= reserved_;  // the next Tick serves the ones behind it
    ready.emplace_back(std::move(it->second.done), std::move(status));
    pending_.erase(it);
  }
  Answer(std::move(ready));
}

void ClaimBook::Tick(bool fleet_changed) {
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.now();
    for (uint64_t id : queue_.ExpiredAt(now)) {
      Pending& p = pending_.at(id);
      const Waiter& w = *queue_.Find(id);
      absl::Status expired = WithErrorInfo(
          absl::ResourceExhaustedError(absl::StrCat(
              "claim.wait: waited ", absl::FormatDuration(now - w.since),
              " in the claim queue; ", p.last.message())),
          kReasonClaimWaitExpired,
          {{"waited_seconds",
            absl::StrCat(absl::ToInt64Seconds(now - w.since))}});
      queue_.Remove(id);
      ready.emplace_back(std::move(p.done), std::move(expired));
      pending_.erase(id);
      freed_ |= reserved_;  // the reserving waiter may be the one gone
    }
    const int64_t expired_before = expired_.load();
    ExpireLocked(now, &ready);
    if (expired_.load() == expired_before && (fleet_changed || freed_) &&
        !queue_.empty()) {
      ServeLocked(now, &ready);
    }
  }
  Answer(std::move(ready));
}

std::vector<Waiter> ClaimBook::Waiters() const {
  absl::MutexLock lock(&mu_);
  return queue_.List();
}

int ClaimBook::waiter_count() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

absl::StatusOr<ClaimBook::Claimed> ClaimBook::SelectLocked(
    const placement::Placer& placer, const Job& job, absl::Duration duration,
    const std::string& holder, const std::string& owner, absl::Time now,
    ClaimBatch batch, bool* learned) {
  Room room(*this, job.share);
  absl::StatusOr<placement::Placement> placement = placer.Select(job, &room);
  if (!placement.ok()) {
    if (!batch.expired.empty()) store_->ApplyClaims(batch).IgnoreError();
    if (absl::IsResourceExhausted(placement.status())) {
      return WithFirstExpiry(placement.status(), room.refused(), now);
    }
    return placement.status();
  }
  // One claim per rank (Job::count), written in one batch: all or none.
  std::vector<const DeviceState*> devices;  // ranks is empty for one
  if (placement->ranks.empty()) devices.push_back(&placement->choice.device);
  for (const placement::Choice& rank : placement->ranks) {
    devices.push_back(&rank.device);
  }
  std::vector<Claim> claims;
  for (const DeviceState* device : devices) {
    Claim claim;
    claim.id = options_.new_id();
    claim.node = device->node;
    claim.device = device->id;
    claim.holder = holder;
    claim.owner = owner;
    claim.expires = WholeMillis(now + duration);
    claim.share = job.share;
    claim.slot = FreeSlot(claim.device, claim.share);
    batch.puts.push_back(ClaimToRecord(claim));
    // Room was judged against these: the store refuses the claim if another
    // server's claim on the device is not among them.
    std::set<std::string>& counted = batch.counted[claim.device];
    if (auto held = held_.find(claim.device); held != held_.end()) {
      for (const auto& [slot, id] : held->second) counted.insert(id);
    }
    claims.push_back(std::move(claim));
  }
  if (absl::Status s = store_->ApplyClaims(batch); !s.ok()) {
    if (absl::IsAborted(s)) {
      absl::StatusOr<std::vector<ClaimRecord>> holders =
          store_->ClaimsHolding(batch.puts);
      if (holders.ok()) {
        for (const ClaimRecord& record : *holders) {
          *learned |= by_id_.count(record.id) == 0;
          Erase(record.id);
          Insert(ClaimFromRecord(record));
        }
      }
    }
    return s;
  }
  for (const Claim& claim : claims) Insert(claim);
  Claimed claimed{*std::move(placement), claims.front(), {}, {}};
  if (claims.size() > 1) claimed.rank_claims = std::move(claims);
  return claimed;
}

absl::StatusOr<int> ClaimBook::ReleaseHolder(
    const std::string& holder,
    const std::function<bool(const Claim&)>& may_release) {
  Ready ready;
  absl::StatusOr<int> released = ReleaseHolderImpl(holder, may_release, &ready);
  Answer(std::move(ready));
  return released;
}

absl::StatusOr<int> ClaimBook::ReleaseHolderImpl(
    const std::string& holder,
    const std::function<bool(const Claim&)>& may_release, Ready* ready) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  ClaimBatch batch;
  for (const auto& [id, claim] : by_id_) {
    if (claim.holder != holder || claim.expires <= now) continue;
    if (!may_release(claim)) {
      return WithErrorInfo(
          absl::PermissionDeniedError(absl::StrCat(
              "holder: claim '", id, "' of '", holder, "' belongs to '",
              claim.owner, "'; nothing was released")),
          kReasonClaimNotOwned, {{"claim_id", id}, {"owner", claim.owner}});
    }
    batch.deletes.push_back(id);
  }
  if (batch.deletes.empty()) return 0;
  CTXSEL_RETURN_IF_ERROR(store_->ApplyClaims(batch));
  for (const std::string& id : batch.deletes) Erase(id);
  ServeLocked(now, ready);
  return static_cast<int>(batch.deletes.size());
}

absl::StatusOr<Claim> ClaimBook::Renew(const std::string& id,
                                       absl::Duration duration) {
  CTXSEL_RETURN_IF_ERROR(CheckDuration(duration, "duration"));
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  CTXSEL_ASSIGN_OR_RETURN(Claim * live, FindLive(id, now));
  if (options_.may_renew) CTXSEL_RETURN_IF_ERROR(options_.may_renew(*live));
  CTXSEL_RETURN_IF_ERROR(
      CheckQuotaLocked(live->owner, live->holder, 1, duration, now, id));
  Claim renewed = *live;
  renewed.expires = WholeMillis(now + duration);
  ClaimBatch batch;
  batch.puts.push_back(ClaimToRecord(renewed));
  CTXSEL_RETURN_IF_ERROR(store_->ApplyClaims(batch));
  Erase(id);
  Insert(renewed);
  return renewed;
}

absl::StatusOr<Claim> ClaimBook::Find(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end() || it->second.expires <= options_.now()) {
    return NotFound(id);
  }
  return it->second;
}

absl::Status ClaimBook::Release(const std::string& id) {
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = options_.now();
    CTXSEL_RETURN_IF_ERROR(FindLive(id, now).status());
    ClaimBatch batch;
    batch.deletes.push_back(id);
    CTXSEL_RETURN_IF_ERROR(store_->ApplyClaims(batch));
    Erase(id);
    ServeLocked(now, &ready);
  }
  Answer(std::move(ready));
  return absl::OkStatus();
}

void ClaimBook::ApplyStored(const ClaimRecord& record) {
  absl::MutexLock lock(&mu_);
  Erase(record.id);
  Insert(ClaimFromRecord(record));
}

void ClaimBook::ApplyStoredDelete(const std::string& id) {
  absl::MutexLock lock(&mu_);
  // Not served here: this runs on the replica's watch of the store, which
  // must not wait on the store's writes.
  if (by_id_.count(id) > 0) freed_ = true;
  Erase(id);
}

std::vector<Claim> ClaimBook::List(absl::string_view node) const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  std::vector<Claim> out;
  for (const auto& [id, claim] : by_id_) {
    if (claim.expires <= now) continue;
    if (!node.empty() && claim.node != node) continue;
    out.push_back(claim);
  }
  std::sort(out.begin(), out.end(), [](const Claim& a, const Claim& b) {
    return std::tie(a.device, a.id) < std::tie(b.device, b.id);
  });
  return out;
}

}  // namespace ctxsel::server
