// decision.h: the per-request half of placement — evaluate each device
// class's dynamic prefix, rank the classes, let the policy pick a device.
//
// Internal to the Placer, which calls Decide() holding a Fleet::Reader (so
// every group and slot stays valid) with the kernel's entry from the
// current snapshot. The work is per *unit*: a device class, or a device
// class on one node layout when the kernel has a `target_device` selector.
//
//   Fleet::Reader reader(fleet);
//   absl::StatusOr<Decision> d = Decide(request, reader);
#ifndef CTXSEL_SERVER_PLACEMENT_DECISION_H_
#define CTXSEL_SERVER_PLACEMENT_DECISION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "selector/selector.h"
#include "server/fleet/device_filter.h"
#include "server/model/model.h"
#include "server/placement/fleet.h"
#include "server/placement/kernel_entry.h"
#include "server/placement/placement.h"

namespace ctxsel::server::placement::internal {

// Resolutions a request made with no fleet lock held, by class id.
using ResolvedClasses =
    absl::flat_hash_map<int, absl::StatusOr<selector::Resolution>>;

// A class a request found neither cached nor in its ResolvedClasses: its
// id and static context (JobSignature::ContextFor), to resolve unlocked.
struct Unresolved {
  int class_id = -1;
  std::shared_ptr<const selector::Context> context;
};

struct Request {
  const KernelEntry* kernel = nullptr;
  const Job* job = nullptr;
  const JobSignature* signature = nullptr;
  // The Placer always passes one (an empty filter matches every device);
  // null, for callers without one, also matches every device.
  const DeviceFilter* device_filter = nullptr;
  uint64_t spread_ticket = 0;  // spread's round-robin position
  int top_k = 0;
  // Fill Decision::classes; and only read the resolution cache (an
  // Explain: see kernel_entry.h).
  bool explain = false;
  // A claiming Select: only devices with claim capacity left; when the best
  // classes have none, the next best classes compete. Null: every device.
  const ClaimCheck* claims = nullptr;
  // Counts resolution cache hits and misses; null: not counted.
  ResolutionCounters* counters = nullptr;
  // Consulted before the kernel's cache; null: none.
  const ResolvedClasses* resolved = nullptr;
  // Non-null: a class to resolve is not resolved here, under the fleet lock
  // (a kernel of 40,000 variants takes 13-23 ms, and heartbeats wait for
  // that lock), but appended, and Decide fails (see there). Null: resolved
  // in place.
  std::vector<Unresolved>* unresolved = nullptr;
  // Non-null: the answer goes here instead of Decision::placement (a
  // one-device Select's own result, which then is not moved out of the
  // Decision). Written once, when a device is chosen; a fresh Placement.
  Placement* placement = nullptr;
  // The job's condition verdicts, shared by every class the request asks
  // (each condition evaluated once per request); null: none kept.
  selector::ConditionVerdicts* condition_verdicts = nullptr;
};

struct Decision {
  // OK, FailedPreconditionError saying why each class was rejected, or
  // (with Request::claims) ResourceExhaustedError "all N fitting devices
  // are claimed".
  absl::Status status;
  Placement placement;               // unless Request::placement
  std::vector<ClassReport> classes;  // only with Request::explain
};

// Healthy devices first; devices of suspect nodes (or degraded ones) only
// when no healthy device can serve the job. Fails with the engine's
// Resolve errors (InvalidArgumentError), or with AbortedError after
// appending to Request::unresolved: the caller resolves those classes,
// with no lock held, into Request::resolved and asks again.
absl::StatusOr<Decision> Decide(const Request& request,
                                const Fleet::Reader& fleet);

}  // namespace ctxsel::server::placement::internal

#endif  // CTXSEL_SERVER_PLACEMENT_DECISION_H_
