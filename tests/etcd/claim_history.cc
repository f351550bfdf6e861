#include "tests/etcd/claim_history.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ctxsel::testing {
namespace {

using Kind = Operation::Kind;

std::string At(Mono t) { return absl::FormatDuration(t); }

std::string Describe(const Operation& op) {
  return absl::StrCat(KindName(op.kind), " by launcher ", op.process,
                      " on replica ", op.replica, " [", At(op.invoked), ", ",
                      At(op.completed),
                      "]: ", absl::StatusCodeToString(op.code),
                      op.message.empty() ? "" : " " + op.message);
}

// The certain holdings of one claim, from its operations (`ops`, each
// naming it), leaving out ops[skip]'s effect (the operation being judged
// must not excuse itself). Empty when no Select acknowledged the claim.
std::vector<Holding> HoldingsOf(const std::vector<const Operation*>& ops,
                                size_t skip, absl::Duration tolerance) {
  struct Acknowledged {
    Mono invoked, completed, expiry;
  };
  std::vector<Acknowledged> acks;
  std::string device;
  // Times after which the claim may have ended or expired: a release
  // invoked; a renewal that did not answer OK may have set an expiry as
  // early as its invocation plus its duration.
  Mono cut = absl::InfiniteDuration();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i == skip) continue;
    const Operation& op = *ops[i];
    const bool ok = op.code == absl::StatusCode::kOk;
    switch (op.kind) {
      case Kind::kClaim:
        if (ok) {
          acks.push_back({op.invoked, op.completed, op.expiry});
          device = op.device;
        }
        break;
      case Kind::kRenew:
        if (ok) {
          acks.push_back({op.invoked, op.completed, op.expiry});
        } else {
          cut = std::min(cut, op.invoked + op.duration);
        }
        break;
      case Kind::kRelease:
        cut = std::min(cut, op.invoked);
        break;
    }
  }
  std::vector<Holding> holdings;
  if (device.empty()) return holdings;
  for (const Acknowledged& k : acks) {
    Mono to = std::min(k.expiry, cut);
    // A renewal invoked after this answer may have set its own expiry
    // from its invocation on: until then this one holds, and after it the
    // earlier of the two.
    for (const Acknowledged& j : acks) {
      if (j.invoked > k.invoked)
        to = std::min(to, std::max(j.invoked, j.expiry));
    }
    to -= tolerance;
    if (to > k.completed) {
      holdings.push_back({ops.front()->claim_id, device, k.completed, to});
    }
  }
  // One claim is one holder: overlapping stretches are merged.
  std::sort(holdings.begin(), holdings.end(),
            [](const Holding& a, const Holding& b) { return a.from < b.from; });
  std::vector<Holding> merged;
  for (Holding& h : holdings) {
    if (!merged.empty() && h.from <= merged.back().to) {
      merged.back().to = std::max(merged.back().to, h.to);
    } else {
      merged.push_back(std::move(h));
    }
  }
  return merged;
}

std::map<std::string, std::vector<const Operation*>> ByClaim(
    const std::vector<Operation>& operations) {
  std::map<std::string, std::vector<const Operation*>> by_claim;
  for (const Operation& op : operations) {
    if (!op.claim_id.empty()) by_claim[op.claim_id].push_back(&op);
  }
  return by_claim;
}

}  // namespace

std::string KindName(Operation::Kind kind) {
  switch (kind) {
    case Kind::kClaim:
      return "claim";
    case Kind::kRenew:
      return "renew";
    case Kind::kRelease:
      return "release";
  }
  return "?";
}

void History::Add(Operation operation) {
  absl::MutexLock lock(&mu_);
  operations_.push_back(std::move(operation));
}

std::vector<Operation> History::operations() const {
  absl::MutexLock lock(&mu_);
  return operations_;
}

std::vector<Holding> CertainHoldings(const std::vector<Operation>& operations,
                                     absl::Duration tolerance) {
  std::vector<Holding> all;
  for (const auto& [id, ops] : ByClaim(operations)) {
    std::vector<Holding> holdings = HoldingsOf(ops, ops.size(), tolerance);
    all.insert(all.end(), holdings.begin(), holdings.end());
  }
  return all;
}

ClaimCheck CheckClaims(const std::vector<Operation>& operations,
                       const std::map<std::string, int>& capacity,
                       absl::Duration tolerance) {
  ClaimCheck check;
  // (c) A claiming Select is never refused as bad input.
  for (const Operation& op : operations) {
    if (op.kind == Kind::kClaim &&
        op.code == absl::StatusCode::kInvalidArgument) {
      check.violations.push_back(absl::StrCat(
          "claiming Select answered INVALID_ARGUMENT: ", Describe(op)));
    }
  }
  // (b) No renewal or release hears NOT_FOUND for a claim that certainly
  // held its device from before it was sent until after it was answered.
  for (const auto& [id, ops] : ByClaim(operations)) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operation& op = *ops[i];
      if (op.kind == Kind::kClaim || op.code != absl::StatusCode::kNotFound) {
        continue;
      }
      for (const Holding& h : HoldingsOf(ops, i, tolerance)) {
        if (h.from <= op.invoked && op.completed < h.to) {
          check.violations.push_back(absl::StrCat(
              "claim ", id, " on ", h.device, " certainly held until ",
              At(h.to), " was gone: ", Describe(op)));
          break;
        }
      }
    }
  }
  // (a) No device is ever held by more certain claims than its capacity.
  std::map<std::string, std::vector<Holding>> by_device;
  for (Holding& h : CertainHoldings(operations, tolerance)) {
    by_device[h.device].push_back(std::move(h));
  }
  for (const auto& [device, holdings] : by_device) {
    auto it = capacity.find(device);
    const int room = it == capacity.end() ? 1 : std::max(1, it->second);
    // Ends before starts at the same time: the stretches are half-open.
    std::vector<std::pair<Mono, int>> events;  // (time, -1 end / +1 start)
    for (const Holding& h : holdings) {
      events.push_back({h.from, +1});
      events.push_back({h.to, -1});
    }
    std::sort(events.begin(), events.end());
    int held = 0, most = 0;
    for (const auto& [t, delta] : events) {
      held += delta;
      if (held > most) most = held;
      if (delta > 0 && held > room) {
        std::vector<std::string> holders;
        for (const Holding& h : holdings) {
          if (h.from <= t && t < h.to) {
            holders.push_back(absl::StrCat(h.claim_id, " [", At(h.from), ", ",
                                           At(h.to), ")"));
          }
        }
        check.violations.push_back(absl::StrCat(
            device, " (capacity ", room, ") held by ", held,
            " certain claims at ", At(t), ": ", absl::StrJoin(holders, ", ")));
      }
    }
    check.max_holders[device] = most;
  }
  return check;
}

}  // namespace ctxsel::testing
