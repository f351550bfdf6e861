// placement.h: what the Placer answers — a placement and its explanation.
//
// Plain values, like server/model/model.h: the RPC layer converts them to
// ctxsel.v1 PlacementChoice / SelectResponse / ExplainResponse messages.
//
//   absl::StatusOr<Placement> p = placer.Select(job);
//   if (p.ok() && !p->choice.base()) {
//     Launch(p->choice.device.id, p->choice.variant->name,
//            p->choice.device_class->traits);
//   }
#ifndef CTXSEL_SERVER_PLACEMENT_PLACEMENT_H_
#define CTXSEL_SERVER_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "selector/device_variables.h"
#include "selector/selector.h"
#include "server/model/model.h"
#include "server/placement/device_class.h"

namespace ctxsel::server::placement {

// What a claiming Select asks about each device it considers: can the
// device take one more claim? server/claims/claims.h answers it; placement
// keeps no claims itself. Called with the Placer's fleet lock held shared, so
// it must not call back into the Placer.
class ClaimCheck {
 public:
  virtual ~ClaimCheck() = default;
  // Whether device `device_id` (with these properties: claim_capacity,
  // memory_bytes) can take the claim being made.
  virtual bool HasRoom(const std::string& device_id,
                       const DeviceProperties& device) const = 0;
};

// One answer: this variant (or the kernel's base function) on this device.
// Cheap to copy: the device's traits and names are its class's, shared.
struct Choice {
  // The chosen variant; null when the kernel's base function was chosen.
  std::shared_ptr<const Variant> variant;
  // The device's own state as the inventory reported it, with the
  // utilisation that the policy saw.
  DeviceState device;
  // The device's class: its traits, SYCL architecture, names
  // (DeviceClassName, DeviceClassShortName) and their ctxsel.v1 form
  // (DeviceClass::proto), built once when the class was interned and
  // shared, never copied per answer. Set in every answer the Placer gives.
  std::shared_ptr<const DeviceClass> device_class;
  // The OpenMP score of the variant on that device; 0 for the base function.
  uint64_t score = 0;
  // The variant's selector is dynamic (condition or target_device) and was
  // picked with this job's variables and target devices.
  bool dynamic = false;
  // Variants ranked above the chosen one on this device whose selector
  // holds except for a runtime-only condition (`condition(foo())`, which
  // only the program can evaluate), best first: the program itself may
  // pick one of them. The service never chooses them.
  std::vector<std::string> runtime_only_variants;
  // The image id of the binary's image that runs on the device; empty when
  // neither the job nor the kernel names images.
  std::string image;

  bool base() const { return variant == nullptr; }
  // The variant's name, or "" for the base function.
  const std::string& variant_name() const;
};

// The answer to Select().
struct Placement {
  Choice choice;
  // Readable, a few lines: the winning class and variant, how many classes
  // competed, what the policy saw. Empty when Job::explanation is false.
  std::string explanation;
  // The next best answers, best first: further devices of the winning
  // classes (least loaded first), then the best device of each other class
  // by decreasing score. At most Job::top_k.
  std::vector<Choice> alternatives;
  // With Job::count > 1: one choice per rank on distinct devices, ranks[0]
  // == choice. Empty for a one-device job (`choice` is its one rank).
  std::vector<Choice> ranks;
};

// How placement judged one device class for a job. When the kernel's
// dynamic prefix has a `target_device` selector the verdict can differ
// between nodes of different layouts; there is then one report per class
// and node layout, and `node_layout` says which.
struct ClassReport {
  std::string device_class;
  std::string device_class_short_name;
  selector::DeviceTraits traits;
  std::string sycl_architecture;
  selector::DeviceCapacity capacity;  // DeviceClass::capacity
  // The layout (NodeLayoutText: "-1:x86_64_v4/amx,0-7:nvidia_gpu_sm_90")
  // of the nodes this report covers; empty when the verdict does not depend
  // on the node.
  std::string node_layout;
  int device_count = 0;           // live devices of the class (or group)
  int eligible_device_count = 0;  // those left after the job's constraints
  // Devices of the class on suspect nodes (heartbeat overdue), left out
  // while healthy devices can serve; not in the counts above then.
  int suspect_device_count = 0;
  // Devices of the class never picked now: unhealthy, and cordoned (a
  // device both is counted cordoned); not in the counts above.
  int unhealthy_device_count = 0;
  int cordoned_device_count = 0;
  bool eligible = false;  // false: `reason` says why
  std::string reason;
  bool winner = false;  // its devices competed in the policy pick
  // The image that would run on the class (Choice::image), and why a
  // generic one runs ("PTX sm_80, JIT-compiled ..."); empty: none known.
  std::string image;
  std::string image_note;
  // The engine's breakdown: selection (index -1: base), every variant in
  // declaration order. Empty candidates when the class is not eligible.
  selector::Explanation explanation;
};

// The answer to Explain(): everything Select() looked at.
struct PlacementReport {
  // OK when Select() would succeed; otherwise its FAILED_PRECONDITION.
  absl::Status status;
  Placement placement;               // valid when status is OK
  std::vector<ClassReport> classes;  // sorted by class name

  // The whole breakdown, readable (a few lines per class and variant);
  // classes by their short names and layouts by NodeLayoutText (the full
  // trait forms are in `classes`).
  std::string ToText() const;
};

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_PLACEMENT_H_
