#include "tests/etcd/fault_workload.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/proto_time.h"

namespace ctxsel::testing {
namespace {

using Kind = Operation::Kind;

std::vector<std::unique_ptr<client::CtxselClient>> Clients(
    const WorkloadOptions& options) {
  std::vector<std::unique_ptr<client::CtxselClient>> clients;
  for (const std::string& address : options.replicas) {
    clients.push_back(
        client::CtxselClient::Connect(address, options.call_timeout));
  }
  return clients;
}

}  // namespace

bool Unanswered(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable ||
         code == absl::StatusCode::kDeadlineExceeded;
}

ClaimingClient::ClaimingClient(const WorkloadOptions& options, int process,
                               const RunClock& clock, History& history)
    : options_(options),
      process_(process),
      clock_(clock),
      history_(history),
      clients_(Clients(options)) {}

template <typename Result>
absl::Status ClaimingClient::WithFailover(
    Operation base,
    const std::function<absl::StatusOr<Result>(client::CtxselClient&)>& call,
    const std::function<void(const Result&, Operation&)>& fill) {
  absl::StatusOr<Result> result = absl::UnknownError("not tried");
  for (int tries = 0; tries < replicas(); ++tries) {
    Operation op = base;
    op.process = process_;
    op.replica = replica_;
    op.invoked = clock_.Now();
    result = call(*clients_[replica_]);
    op.completed = clock_.Now();
    op.code = result.status().code();
    if (result.ok()) {
      fill(*result, op);
    } else {
      op.message = std::string(result.status().message().substr(0, 300));
    }
    history_.Add(std::move(op));
    if (!Unanswered(result.status().code())) break;
    replica_ = (replica_ + 1) % replicas();
  }
  return result.status();
}

std::optional<ClaimingClient::Held> ClaimingClient::Claim(
    absl::Duration duration) {
  v1::SelectRequest request;
  request.mutable_job()->set_kernel(options_.kernel);
  request.mutable_job()->set_device_filter(options_.device_filter);
  *request.mutable_claim()->mutable_duration() = ToProtoDuration(duration);
  request.mutable_claim()->set_holder(absl::StrCat("launcher-", process_));
  Operation base;
  base.kind = Kind::kClaim;
  base.duration = duration;
  std::optional<Held> held;
  WithFailover<v1::SelectResponse>(
      base, [&](client::CtxselClient& c) { return c.Select(request); },
      [&](const v1::SelectResponse& answer, Operation& op) {
        op.claim_id = answer.claim().id();
        op.device = answer.claim().device();
        op.expiry =
            clock_.FromWall(FromProtoTimestamp(answer.claim().expire_time()));
        held = Held{op.claim_id, op.expiry};
      })
      .IgnoreError();  // recorded; `held` says how it went
  return held;
}

std::optional<Mono> ClaimingClient::Renew(const std::string& id,
                                          absl::Duration duration) {
  Operation base;
  base.kind = Kind::kRenew;
  base.claim_id = id;
  base.duration = duration;
  std::optional<Mono> expiry;
  WithFailover<v1::Claim>(
      base,
      [&](client::CtxselClient& c) {
        return c.RenewClaim(id, absl::ToChronoMilliseconds(duration));
      },
      [&](const v1::Claim& claim, Operation& op) {
        op.expiry = clock_.FromWall(FromProtoTimestamp(claim.expire_time()));
        expiry = op.expiry;
      })
      .IgnoreError();  // recorded; `expiry` says how it went
  return expiry;
}

void ClaimingClient::Release(const std::string& id) {
  Operation base;
  base.kind = Kind::kRelease;
  base.claim_id = id;
  WithFailover<bool>(
      base,
      [&](client::CtxselClient& c) -> absl::StatusOr<bool> {
        absl::Status released = c.ReleaseClaim(id);
        if (!released.ok()) return released;
        return true;
      },
      [](const bool&, Operation&) {})
      .IgnoreError();  // recorded
}

Workload::Workload(WorkloadOptions options, const RunClock& clock,
                   History& history)
    : options_(std::move(options)), clock_(clock), history_(history) {}

void Workload::Start() {
  stop_.store(false);
  for (int i = 0; i < options_.launchers; ++i) {
    threads_.emplace_back([this, i] { Launcher(i); });
  }
  threads_.emplace_back([this] { Writer(); });
}

void Workload::Stop() {
  stop_.store(true);
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

Registrations Workload::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

void Workload::Nap(absl::Duration d) {
  const Mono until = clock_.Now() + d;
  while (!stop_.load() && clock_.Now() < until) {
    absl::SleepFor(std::min(until - clock_.Now(), absl::Milliseconds(50)));
  }
}

// Claims for 2-4 s, then uses the claim a while and releases it; or renews
// it once or twice and releases or abandons it; or abandons it but renews
// or releases it just before its expiry (the edge where replicas that
// disagree on expiry meet); or abandons it at once (it expires). Choices
// come from a seeded generator, so every run asks the same.
void Workload::Launcher(int index) {
  std::mt19937 random(1000 + index);
  auto pick = [&](int n) { return static_cast<int>(random() % n); };
  ClaimingClient launcher(options_, index, clock_, history_);
  launcher.set_replica(index);
  while (!stop_.load()) {
    std::optional<ClaimingClient::Held> held =
        launcher.Claim(absl::Seconds(2 + pick(3)));
    if (!held.has_value()) {
      Nap(absl::Milliseconds(100 + pick(200)));
      continue;
    }
    const absl::Duration hold = absl::Milliseconds(200 + pick(800));
    const absl::Duration before_expiry = absl::Milliseconds(50 + pick(250));
    switch (pick(5)) {
      case 0:  // use it, release it
        Nap(hold);
        launcher.Release(held->id);
        break;
      case 1: {  // renew once or twice, then release or abandon
        const int renewals = 1 + pick(2);
        const bool release = pick(2) == 0;
        bool lost = false;
        for (int i = 0; i < renewals && !lost && !stop_.load(); ++i) {
          Nap(hold);
          lost =
              !launcher.Renew(held->id, absl::Seconds(2 + pick(2))).has_value();
        }
        if (release && !lost) launcher.Release(held->id);
        break;
      }
      case 2:  // renew just before the expiry
        Nap(held->expiry - clock_.Now() - before_expiry);
        if (!stop_.load()) launcher.Renew(held->id, absl::Seconds(2));
        break;
      case 3:  // release just before the expiry
        Nap(held->expiry - clock_.Now() - before_expiry);
        if (!stop_.load()) launcher.Release(held->id);
        break;
      default:  // abandon at once
        break;
    }
    Nap(absl::Milliseconds(50 + pick(150)));
  }
}

// Registers e0, e1, ... one at a time, each name until it is stored: an
// answer of OK, or ALREADY_EXISTS on a retry (an earlier attempt stored
// it); a failure moves to the next replica.
void Workload::Writer() {
  std::vector<std::unique_ptr<client::CtxselClient>> clients =
      Clients(options_);
  int replica = 0;
  int next = 0;
  // The failures answered under the current name, and whether one of them
  // left the outcome open.
  std::vector<std::string> refusals;
  bool uncertain = false;
  while (!stop_.load()) {
    const std::string name = absl::StrCat("e", next);
    v1::RegisterVariantsRequest request;
    request.set_kernel(options_.journal);
    v1::Variant* variant = request.add_variants();
    variant->set_name(name);
    variant->set_selector("device={arch(nvptx)}");
    auto answer = clients[replica]->RegisterVariants(request);
    const Mono done = clock_.Now();
    {
      absl::MutexLock lock(&mu_);
      registrations_.codes[answer.status().code()]++;
      const bool stored_before =
          !refusals.empty() && absl::IsAlreadyExists(answer.status());
      if (answer.ok()) {
        registrations_.acknowledged.push_back({name, answer->revision(), done});
      } else if (stored_before) {
        registrations_.found.push_back({name, 0, done});
        if (!uncertain) {
          registrations_.false_refusals.push_back(absl::StrCat(
              name, " was stored after answers that said it was not: ",
              absl::StrJoin(refusals, "; ")));
        }
      } else {
        refusals.push_back(answer.status().ToString());
        uncertain = uncertain || Unanswered(answer.status().code()) ||
                    absl::IsUnknown(answer.status());
        replica = (replica + 1) % clients.size();
      }
      if (answer.ok() || stored_before) {
        ++next;
        refusals.clear();
        uncertain = false;
      }
    }
    Nap(absl::Milliseconds(200));
  }
}

}  // namespace ctxsel::testing
