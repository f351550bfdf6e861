#include "server/placement/placer.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "selector/job_check.h"
#include "server/model/kernel_errors.h"
#include "server/placement/decision.h"
#include "server/placement/fleet.h"
#include "server/placement/kernel_entry.h"

namespace ctxsel::server::placement {
namespace internal {

// What readers see: the kernels with their resolution caches. Replaced
// whole on variant changes; the fleet is updated in place (fleet.h).
struct Snapshot {
  absl::flat_hash_map<std::string, std::shared_ptr<const KernelEntry>> kernels;
};

}  // namespace internal

using internal::Decision;
using internal::Fleet;
using internal::JobSignature;
using internal::KernelEntry;
using internal::Snapshot;

namespace {

void CountRebuild(internal::ResolutionCounters& counters, absl::Duration took) {
  counters.rebuilds.fetch_add(1);
  counters.rebuild_nanos.fetch_add(absl::ToInt64Nanoseconds(took));
}

// The ClaimCheck of a multi-device Select: the ranks placed so far are
// taken, so every rank gets a distinct device; the rest as `claims` says
// (every device when null).
class RankExclusion : public ClaimCheck {
 public:
  explicit RankExclusion(const ClaimCheck* claims) : claims_(claims) {}
  bool HasRoom(const std::string& device_id,
               const DeviceProperties& device) const override {
    return !taken_.contains(device_id) &&
           (claims_ == nullptr || claims_->HasRoom(device_id, device));
  }
  void Take(const std::string& device_id) { taken_.insert(device_id); }

 private:
  const ClaimCheck* const claims_;
  absl::flat_hash_set<std::string> taken_;
};

// How many distinct devices, up to Job::count, fit `request` with only the
// ranks' exclusion (no claims).
absl::StatusOr<int> FittingDevices(internal::Request request,
                                   const Fleet::Reader& reader) {
  RankExclusion exclusion(nullptr);
  request.claims = &exclusion;
  request.explain = false;
  int fitting = 0;
  for (; fitting < request.job->count; ++fitting) {
    CTXSEL_ASSIGN_OR_RETURN(Decision d, internal::Decide(request, reader));
    if (!d.status.ok()) break;
    exclusion.Take(d.placement.choice.device.id);
  }
  return fitting;
}

// Job::count devices, one Decide per rank over one view of the fleet, each
// rank the best device the earlier ranks left: all of them, or the reason
// there are fewer (FailedPrecondition: fewer fit; ResourceExhausted: they
// fit, but fewer have claim room).
absl::StatusOr<Decision> DecideRanks(internal::Request request,
                                     const Fleet::Reader& reader) {
  const Job& job = *request.job;
  const ClaimCheck* claims = request.claims;
  RankExclusion exclusion(claims);
  request.claims = &exclusion;
  Decision first;
  for (int rank = 0; rank < job.count; ++rank) {
    CTXSEL_ASSIGN_OR_RETURN(Decision d, internal::Decide(request, reader));
    if (!d.status.ok() && rank == 0 && !absl::IsResourceExhausted(d.status)) {
      return d;  // nothing fits at all: the one-device answer says why
    }
    if (!d.status.ok()) {
      CTXSEL_ASSIGN_OR_RETURN(int fitting, FittingDevices(request, reader));
      const std::string what =
          absl::StrCat("count ", job.count, " for kernel '", job.kernel,
                       "' (all or nothing): ");
      Decision refused;  // never a partial answer
      const std::vector<std::pair<std::string, std::string>> metadata = {
          {"kernel", job.kernel},
          {"fitting", absl::StrCat(fitting)},
          {"count", absl::StrCat(job.count)}};
      refused.status =
          fitting < job.count
              ? WithErrorInfo(absl::FailedPreconditionError(absl::StrCat(
                                  what, "only ", fitting,
                                  " distinct devices fit the job")),
                              kReasonNoFittingDevice, metadata)
              : WithErrorInfo(absl::ResourceExhaustedError(absl::StrCat(
                                  what, "the devices fit, but only ", rank,
                                  " of them have claim room")),
                              kReasonClaimsExhausted, metadata);
      return refused;
    }
    exclusion.Take(d.placement.choice.device.id);
    if (rank == 0) {
      first = std::move(d);
      first.placement.ranks.reserve(job.count);
      first.placement.ranks.push_back(first.placement.choice);
    } else {
      first.placement.ranks.push_back(std::move(d.placement.choice));
    }
  }
  return first;
}

// Job::count ranks on one node (Job::same_node): DecideRanks confined to the
// node of the best first rank; when that node cannot hold them all, its
// devices are passed over and the next best node's tried, kSameNodeTries
// nodes at most, so the cost stays bounded on a large fleet.
absl::StatusOr<Decision> DecideRanksOnOneNode(internal::Request request,
                                              const Fleet::Reader& reader) {
  constexpr int kSameNodeTries = 8;
  const Job& job = *request.job;
  RankExclusion passed_over(request.claims);
  internal::Request first = request;
  first.claims = &passed_over;
  absl::Status last;
  int tried = 0;
  for (; tried < kSameNodeTries; ++tried) {
    CTXSEL_ASSIGN_OR_RETURN(Decision d, internal::Decide(first, reader));
    if (!d.status.ok()) {
      if (tried == 0) return d;  // nothing fits at all
      break;
    }
    const std::string node = d.placement.choice.device.node;
    Job on_node = job;
    on_node.nodes = {node};
    internal::Request ranks = request;
    ranks.job = &on_node;
    CTXSEL_ASSIGN_OR_RETURN(Decision all, DecideRanks(ranks, reader));
    if (all.status.ok()) return all;
    last = all.status;
    if (const std::vector<DeviceSlot*>* slots = reader.node(node)) {
      for (const DeviceSlot* slot : *slots) passed_over.Take(slot->id);
    }
  }
  Decision failed;
  failed.status = absl::Status(
      last.code(), absl::StrCat("same_node: none of the ", tried,
                                " best nodes can hold all ", job.count,
                                " ranks; the last: ", last.message()));
  return failed;
}

}  // namespace

Placer::Placer(PlacerOptions options)
    : options_(options),
      fleet_(std::make_unique<Fleet>()),
      snapshot_(std::make_shared<const Snapshot>()),
      filters_(static_cast<size_t>(std::max(0, options.max_cached_filters))),
      // Ids for 64 kernels' worth of distinct signatures (64 is a guess,
      // not the kernel count); later signatures get none and are found by
      // key, correct but slower (kernel_entry.h).
      signature_ids_(std::max(0, options.max_signatures_per_kernel) * 64) {}

Placer::~Placer() = default;

std::shared_ptr<const Snapshot> Placer::snapshot() const {
  return std::atomic_load(&snapshot_);
}

void Placer::Publish(std::shared_ptr<const Snapshot> snapshot) {
  std::atomic_store(&snapshot_, std::move(snapshot));
}

absl::Status Placer::SetVariants(absl::string_view kernel,
                                 std::vector<Variant> variants) {
  if (variants.empty()) {
    RemoveKernel(kernel);
    return absl::OkStatus();
  }
  CTXSEL_ASSIGN_OR_RETURN(
      std::shared_ptr<KernelEntry> entry,
      KernelEntry::Make(std::string(kernel), std::move(variants),
                        options_.max_signatures_per_kernel));
  absl::MutexLock lock(&write_mu_);
  std::shared_ptr<const Snapshot> old = snapshot();
  auto next = std::make_shared<Snapshot>(*old);
  if (auto it = old->kernels.find(kernel); it != old->kernels.end()) {
    entry->AdoptSignatures(*it->second);
  }
  // The static work up front, for the signatures jobs have used so far.
  const absl::Time start = absl::Now();
  entry->ResolveAhead(fleet_->Classes());
  CountRebuild(counters_, absl::Now() - start);
  next->kernels[kernel] = std::move(entry);
  Publish(std::move(next));
  return absl::OkStatus();
}

bool Placer::RemoveKernel(absl::string_view kernel) {
  absl::MutexLock lock(&write_mu_);
  std::shared_ptr<const Snapshot> old = snapshot();
  if (!old->kernels.contains(kernel)) return false;
  auto next = std::make_shared<Snapshot>(*old);
  next->kernels.erase(kernel);
  Publish(std::move(next));
  return true;
}

void Placer::ApplyClassChanges(const internal::FleetClassChanges& changes) {
  if (changes.created.empty() && changes.freed.empty()) return;
  std::shared_ptr<const Snapshot> current = snapshot();
  const absl::Time start = absl::Now();
  for (const auto& [name, entry] : current->kernels) {
    entry->Forget(changes.freed);
    entry->ResolveAhead(changes.created);
  }
  CountRebuild(counters_, absl::Now() - start);
}

Placer::CacheStats Placer::cache_stats() const {
  CacheStats stats;
  stats.hits = counters_.hits.load();
  stats.misses = counters_.misses.load();
  stats.rebuilds = counters_.rebuilds.load();
  stats.rebuild_time = absl::Nanoseconds(counters_.rebuild_nanos.load());
  return stats;
}

absl::Status Placer::SetNodeDevices(absl::string_view node,
                                    std::vector<Device> devices) {
  absl::MutexLock lock(&write_mu_);
  Fleet::ClassChanges changes;
  absl::Status s = fleet_->ReplaceNode(node, std::move(devices), &changes);
  ApplyClassChanges(changes);
  return s;
}

bool Placer::RemoveNode(absl::string_view node) {
  absl::MutexLock lock(&write_mu_);
  Fleet::ClassChanges changes;
  const bool removed = fleet_->RemoveNode(node, &changes);
  ApplyClassChanges(changes);
  return removed;
}

absl::Status Placer::SetDevices(std::vector<Device> devices) {
  absl::MutexLock lock(&write_mu_);
  Fleet::ClassChanges changes;
  absl::Status s = fleet_->ReplaceAll(std::move(devices), &changes);
  ApplyClassChanges(changes);
  return s;
}

absl::Status Placer::UpdateUtilisations(
    absl::string_view node,
    absl::Span<const std::pair<std::string, double>> updates) {
  return fleet_->UpdateUtilisations(node, updates);
}

std::vector<std::string> Placer::SetCordons(
    const std::vector<Cordon>& cordons) {
  return fleet_->SetCordons(cordons);
}

void Placer::SetNodeSuspect(absl::string_view node, bool suspect) {
  fleet_->SetSuspect(node, suspect);
}

std::vector<Device> Placer::NodeDevices(absl::string_view node) const {
  std::vector<Device> devices;
  std::shared_ptr<const internal::NodeListing> listing = fleet_->Listing(node);
  if (listing == nullptr) return devices;
  internal::NodeListing::Utilisations utilisation;
  listing->ReadUtilisations(&utilisation);
  devices.reserve(utilisation.size());
  for (size_t i = 0; i < utilisation.size(); ++i) {
    devices.push_back(listing->ToDevice(i, utilisation[i]));
  }
  return devices;
}

void Placer::ScanDevices(absl::Span<const std::string> nodes,
                         DeviceScan* scan) const {
  const DeviceFilter& filter = *scan->filter;
  // The last (class id, layout id) asked and its verdict: a node's devices
  // mostly share both, so most devices cost no hash lookup.
  std::pair<int, int> last = {-1, -1};
  bool passes = filter.empty();
  internal::NodeListing::Utilisations utilisation;
  for (const std::string& node : nodes) {
    if (!scan->NextNode()) return;
    // The node's published record: no fleet lock (node_listing.h).
    std::shared_ptr<const internal::NodeListing> listing =
        fleet_->Listing(node);
    if (listing == nullptr) continue;
    const NodeLayout& layout = listing->layout();
    utilisation.clear();  // read once a device passes
    absl::Span<const internal::ListedDevice> devices = listing->devices();
    for (size_t i = 0; i < devices.size(); ++i) {
      if (!scan->Reads(devices[i].index)) continue;
      const DeviceClass& c = *devices[i].device_class;
      if (!filter.empty() && std::make_pair(c.id, layout.id) != last) {
        last = {c.id, layout.id};
        auto [it, added] = scan->verdicts.try_emplace(last);
        if (added) {
          it->second = filter.Matches(c.traits, layout.TargetDevicesFor(c.id));
        }
        passes = it->second;
      }
      if (!passes) continue;
      if (utilisation.empty()) listing->ReadUtilisations(&utilisation);
      if (!scan->Keep(listing->ToDevice(i, utilisation[i]))) return;
    }
  }
}

absl::StatusOr<DeviceClassNames> Placer::DeviceClassOf(
    absl::string_view device_id) const {
  return fleet_->ClassOf(device_id);
}

namespace {

// Placer::Decide's rounds, with `request` made: returns the Decision it
// made in place (one name on every path, so the answer is not moved once
// more per hop).
absl::StatusOr<Decision> DecideInRounds(const Fleet& fleet,
                                        internal::Request& request) {
  const Job& job = *request.job;
  const bool explain = request.explain;
  const JobSignature* signature = request.signature;
  // Resolving is the one slow step (13-23 ms for a kernel of 40,000
  // variants), and heartbeats take the fleet lock exclusively: a class not
  // yet resolved for this signature is resolved after the reader lets go,
  // and the request decides again. A few rounds cover classes created
  // meanwhile; the last resolves in place, so a request always ends.
  constexpr int kUnlockedRounds = 4;
  internal::ResolvedClasses resolved;
  std::vector<internal::Unresolved> unresolved;
  request.resolved = &resolved;
  auto decide = [&](int round) {
    request.unresolved = round < kUnlockedRounds ? &unresolved : nullptr;
    Fleet::Reader reader(fleet);
    return job.count > 1 && !explain
               ? (job.same_node ? DecideRanksOnOneNode(request, reader)
                                : DecideRanks(request, reader))
               : internal::Decide(request, reader);
  };
  absl::StatusOr<Decision> d = decide(0);
  for (int round = 1; !unresolved.empty(); ++round) {
    // Classes that differ only in capacity (device_class.h) have one static
    // context, so one resolution serves them all: an 80 GB and a 40 GB H100
    // class cost one Resolve.
    std::vector<std::pair<std::string, int>> resolved_traits;
    for (internal::Unresolved& u : unresolved) {
      if (resolved.contains(u.class_id)) continue;
      std::string traits = DeviceClassKey(u.context->device, "");
      auto same = std::find_if(resolved_traits.begin(), resolved_traits.end(),
                               [&](const std::pair<std::string, int>& r) {
                                 return r.first == traits;
                               });
      if (same != resolved_traits.end()) {
        absl::StatusOr<selector::Resolution> r = resolved.at(same->second);
        if (r.ok() && !explain) {
          request.kernel->Store(*signature, u.class_id, *r);
        }
        resolved.emplace(u.class_id, std::move(r));
        continue;
      }
      resolved.emplace(u.class_id,
                       request.kernel->ResolveFor(
                           *signature, u.class_id, std::move(u.context),
                           explain ? internal::CacheUse::kReadOnly
                                   : internal::CacheUse::kFill));
      resolved_traits.emplace_back(std::move(traits), u.class_id);
    }
    unresolved.clear();
    d = decide(round);
  }
  if (!resolved.empty() && !explain) {
    // A class freed before its resolution was kept escaped the
    // Forget that its removal made: forget it here.
    absl::flat_hash_set<int> live;
    for (const DeviceClass* c : fleet.Classes()) {
      live.insert(c->id);
    }
    std::vector<int> gone;
    for (const auto& [id, r] : resolved) {
      if (!live.contains(id)) gone.push_back(id);
    }
    request.kernel->Forget(gone);
  }
  return d;
}

}  // namespace

absl::StatusOr<Decision> Placer::Decide(const Job& job, bool explain,
                                        const ClaimCheck* claims,
                                        Placement* placement) const {
  if (job.kernel.empty()) {
    return WithFieldViolation(absl::InvalidArgumentError("kernel: empty"),
                              "job.kernel", "empty");
  }
  std::shared_ptr<const Snapshot> snap = snapshot();
  auto it = snap->kernels.find(job.kernel);
  if (it == snap->kernels.end()) {
    return KernelNotFound(job.kernel);
  }
  if (absl::Status s =
          selector::CheckVariablesGiven(it->second->variables(), job.variables);
      !s.ok()) {
    return MissingJobVariables(s);
  }
  CTXSEL_ASSIGN_OR_RETURN(DeviceFilter filter,
                          filters_.Get(job.device_filter, "job.device_filter"));
  // Only Select numbers new signatures and fills the caches; Explain reads
  // them (a reader's jobs must not fill the caps, kernel_entry.h). A
  // signature seen before is the numbered one: nothing copied per request.
  const JobSignature* signature =
      explain ? signature_ids_.Find(job) : signature_ids_.Intern(job);
  JobSignature unnumbered;  // found by key
  if (signature == nullptr) {
    unnumbered = JobSignature::Of(job);
    signature = &unnumbered;
  }
  internal::Request request;
  request.kernel = it->second.get();
  request.job = &job;
  request.signature = signature;
  request.device_filter = &filter;
  request.top_k = job.top_k > 0 ? std::min(job.top_k, options_.max_top_k)
                                : options_.default_top_k;
  request.explain = explain;
  request.claims = claims;
  request.placement = placement;
  request.counters = &counters_;
  selector::ConditionVerdicts condition_verdicts;
  request.condition_verdicts = &condition_verdicts;
  if (job.policy == Policy::kSpread) {
    // Explain shows what the next spread Select would do without using it.
    request.spread_ticket =
        explain ? spread_ticket_.load(std::memory_order_relaxed)
                : spread_ticket_.fetch_add(1, std::memory_order_relaxed);
  }
  return DecideInRounds(*fleet_, request);
}

absl::StatusOr<Placement> Placer::Select(const Job& job,
                                         const ClaimCheck* claims) const {
  // A one-device answer is made in the StatusOr returned (one name on
  // every path), not moved out of the Decision: a Placement is some twenty
  // strings and vectors.
  absl::StatusOr<Placement> out(absl::in_place);
  const bool ranks = job.count > 1;
  absl::StatusOr<Decision> d =
      Decide(job, /*explain=*/false, claims, ranks ? nullptr : &*out);
  if (!d.ok()) {
    out = d.status();
  } else if (!d->status.ok()) {
    out = d->status;
  } else if (ranks) {
    *out = std::move(d->placement);
  }
  return out;
}

absl::StatusOr<PlacementReport> Placer::Explain(const Job& job) const {
  CTXSEL_ASSIGN_OR_RETURN(Decision d, Decide(job, /*explain=*/true, nullptr));
  PlacementReport report;
  report.status = d.status;
  report.placement = std::move(d.placement);
  report.classes = std::move(d.classes);
  return report;
}

absl::StatusOr<CoverageReport> Placer::Coverage(
    const CoverageQuery& query) const {
  std::shared_ptr<const Snapshot> snap = snapshot();
  auto it = snap->kernels.find(query.job.kernel);
  const KernelEntry* live =
      it == snap->kernels.end() ? nullptr : it->second.get();
  return internal::Cover(live, query, *fleet_,
                         options_.max_signatures_per_kernel);
}

}  // namespace ctxsel::server::placement
