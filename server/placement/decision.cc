#include "server/placement/decision.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "images/device_image.h"
#include "server/model/policy.h"
#include "server/placement/pick.h"

namespace ctxsel::server::placement::internal {
namespace {

// A device class (or a class on one node layout) as this request sees it.
struct Unit {
  const DeviceClass* device_class = nullptr;
  const NodeLayout* layout = nullptr;  // gives the target devices
  bool per_layout = false;
  // Within the job's nodes; a class has a group per layout (a few), so
  // they fit inline.
  absl::InlinedVector<const DeviceGroup*, 4> groups;
  int device_count = 0;
  int eligible_count = 0;
  int suspect_count = 0;    // left out: on suspect nodes (or degraded)
  int unhealthy_count = 0;  // left out: unhealthy, not cordoned
  int cordoned_count = 0;   // left out: cordoned
  std::string reason;       // why rejected; empty when eligible
  // The binary's image that would run here (ImagesOf); null: none known.
  const images::DeviceImage* image = nullptr;
  images::Fit image_fit = images::Fit::kNone;
  std::string image_note;  // why a generic image runs
  std::optional<selector::Resolution> resolution;
  // The job's variables and the class's device variables, when the kernel
  // reads some (KernelEntry::reads_device_variables); unset: the job's.
  std::optional<selector::Variables> variables;
  selector::Selection selection;
  bool winner = false;

  bool eligible() const { return reason.empty(); }
  // Variants rank above the base function, then by score, then a class
  // with an image built for it above one that JIT-compiles PTX.
  std::tuple<int, uint64_t, bool> rank() const {
    return {selection.base() ? 0 : 1, selection.score,
            image_fit == images::Fit::kExact};
  }
};

// The first few of `names` for a message, and how many more: a job may
// name hundreds, and a message must stay readable (and small).
std::string FewOf(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(
      absl::StrJoin(names.begin(), names.begin() + kShown, ", "), " and ",
      names.size() - kShown, " more");
}

// The job's device constraints (Job::nodes, Job::allowed_devices): private
// groups holding only the devices the job may use, keyed by the fleet group
// they come from. Costs O(named nodes' devices + allowed devices), never
// the fleet's size.
class DeviceScope {
 public:
  DeviceScope(const Job& job, const Fleet::Reader& fleet)
      : active_(!job.nodes.empty() || !job.allowed_devices.empty()) {
    absl::flat_hash_set<std::string> nodes;
    for (const std::string& name : job.nodes) {
      if (!nodes.insert(name).second) continue;
      const std::vector<DeviceSlot*>* slots = fleet.node(name);
      if (slots == nullptr) {
        unknown_.push_back(name);
        continue;
      }
      if (!job.allowed_devices.empty()) continue;  // only those, below
      for (const DeviceSlot* slot : *slots) Add(slot);
    }
    absl::flat_hash_set<const DeviceSlot*> added;
    for (const std::string& name : job.allowed_devices) {
      const DeviceSlot* slot = fleet.device(name);
      if (slot == nullptr) {
        unknown_devices_.push_back(name);
        continue;
      }
      if (!nodes.empty() && !nodes.contains(slot->node)) {
        outside_nodes_.push_back(name);
        continue;
      }
      if (added.insert(slot).second) Add(slot);
    }
  }
  // The part of `g` the job may use; null when none.
  const DeviceGroup* Restrict(const DeviceGroup* g) const {
    if (!active_) return g;
    auto it = private_.find(g);
    return it == private_.end() ? nullptr : it->second.get();
  }
  // Why the constraints left devices out, for NoPlacement; empty when none.
  std::vector<std::string> Reasons() const {
    std::vector<std::string> why;
    if (!unknown_.empty()) {
      why.push_back(absl::StrCat("unknown nodes: ", FewOf(unknown_)));
    }
    if (!unknown_devices_.empty()) {
      why.push_back(
          absl::StrCat("allowed_devices not live: ", FewOf(unknown_devices_)));
    }
    if (!outside_nodes_.empty()) {
      why.push_back(absl::StrCat("allowed_devices outside the job's nodes: ",
                                 FewOf(outside_nodes_)));
    }
    return why;
  }

 private:
  void Add(const DeviceSlot* slot) {
    std::unique_ptr<DeviceGroup>& g = private_[slot->group];
    if (g == nullptr) {
      g = std::make_unique<DeviceGroup>(&slot->group->device_class(),
                                        &slot->group->layout());
    }
    g->Add(slot);
  }

  const bool active_;
  absl::flat_hash_map<const DeviceGroup*, std::unique_ptr<DeviceGroup>>
      private_;
  std::vector<std::string> unknown_;          // nodes
  std::vector<std::string> unknown_devices_;  // allowed_devices entries
  std::vector<std::string> outside_nodes_;    // allowed, but not on `nodes`
};

// A request's units and the pointers into them: a fleet has a few classes
// and layouts, so they fit inline, and a Select allocates none of them.
using Units = absl::InlinedVector<Unit, 8>;
using UnitPtrs = absl::InlinedVector<Unit*, 8>;

// With `include_suspect`, devices of suspect nodes compete too.
Units MakeUnits(const Request& r, const Fleet::Reader& fleet,
                const DeviceScope& scope, bool include_suspect) {
  Units units;
  bool per_layout = r.kernel->layout_dependent();
  units.reserve(fleet.group_count());  // at most one unit per group
  fleet.ForEachGroup([&](const DeviceGroup* g) {
    if (per_layout || units.empty() ||
        units.back().device_class != &g->device_class()) {
      units.emplace_back();
      units.back().device_class = &g->device_class();
      units.back().layout = &g->layout();
      units.back().per_layout = per_layout;
    }
    Unit& u = units.back();
    if (g->excluded()) {
      // Cordoned or unhealthy: counted for Explain, never picked.
      g->CountExcluded(&u.cordoned_count, &u.unhealthy_count);
      return;
    }
    if (g->suspect() && !include_suspect) {
      u.suspect_count += static_cast<int>(g->size());
      return;
    }
    u.device_count += static_cast<int>(g->size());
    if (const DeviceGroup* mine = scope.Restrict(g); mine != nullptr) {
      u.groups.push_back(mine);
      u.eligible_count += static_cast<int>(mine->size());
    }
  });
  return units;
}

// The capacity minimums (Job::min_memory_bytes, min_compute_units) against
// the class's capacity; why not, or empty.
std::string CapacityShortfall(const Job& job,
                              const selector::DeviceCapacity& have) {
  auto has = [&](const selector::DeviceCapacity& part) {
    return part.memory_bytes + part.compute_units == 0
               ? std::string("none reported")
               : CapacityText(part);
  };
  if (job.min_memory_bytes > have.memory_bytes) {
    return absl::StrCat("min_memory: needs ",
                        CapacityText({.memory_bytes = job.min_memory_bytes}),
                        ", the class has ",
                        has({.memory_bytes = have.memory_bytes}));
  }
  if (job.min_compute_units > have.compute_units) {
    return absl::StrCat("min_compute_units: needs ", job.min_compute_units,
                        ", the class has ",
                        has({.compute_units = have.compute_units}));
  }
  return "";
}

// No device runs a program without an image for it: the class needs one of
// `all` (not empty), the one built for it before a generic one.
ImageCheck CheckImagesOn(const std::vector<images::DeviceImage>& all,
                         const DeviceClass& c) {
  ImageCheck check;
  check.image = images::BestImage(all, c.traits, &check.fit, &check.note);
  if (check.image != nullptr) return check;
  std::vector<std::string> ids;
  for (const images::DeviceImage& image : all) ids.push_back(ImageId(image));
  check.reason = absl::StrCat(
      "images: the binary has no image this class runs (", FewOf(ids), ")");
  return check;
}

// The images the job's binary carries: the job's own, checked here, else
// the kernel's, checked once per class (KernelEntry::ImagesOn).
void CheckImages(const Request& r, Unit& u) {
  // Most kernels and jobs name no images: nothing to build or copy then.
  if (r.job->images.empty() && r.kernel->images().empty()) return;
  std::shared_ptr<const ImageCheck> kept;
  ImageCheck own;
  const ImageCheck* check = &own;
  if (!r.job->images.empty()) {
    own = CheckImagesOn(r.job->images, *u.device_class);
  } else {
    kept = r.kernel->ImagesOn(u.device_class->id, [&] {
      return CheckImagesOn(r.kernel->images(), *u.device_class);
    });
    check = kept.get();
  }
  u.image = check->image;
  u.image_fit = check->fit;
  u.image_note = check->note;
  u.reason = check->reason;
}

void CheckFilter(const Request& r, Unit& u) {
  if (!r.job->required_kind.empty() &&
      !u.device_class->traits.kind.contains(r.job->required_kind)) {
    u.reason = absl::StrCat("required_kind: not a ", r.job->required_kind);
    return;
  }
  std::string reason;
  // An empty filter passes every class: no target devices looked up.
  if (r.device_filter != nullptr && !r.device_filter->empty() &&
      !r.device_filter->Matches(u.device_class->traits,
                                u.layout->TargetDevicesFor(u.device_class->id),
                                &reason)) {
    u.reason = absl::StrCat("device_filter: ", reason);
    return;
  }
  u.reason = CapacityShortfall(*r.job, u.device_class->capacity);
  if (u.reason.empty()) CheckImages(r, u);
}

const selector::Variables& VariablesOf(const Request& r, const Unit& u) {
  return u.variables.has_value() ? *u.variables : r.job->variables;
}

// Runs the dynamic prefix of `res`, the unit's static resolution.
absl::Status Evaluate(const Request& r, Unit& u,
                      absl::StatusOr<selector::Resolution> res) {
  if (!res.ok()) {
    return WithFieldViolation(absl::InvalidArgumentError(absl::StrCat(
                                  "job: ", res.status().message())),
                              "job", res.status().message());
  }
  u.resolution = *std::move(res);
  if (r.kernel->reads_device_variables()) {
    // Classes x variables, never devices: every device of a class has its
    // capacity.
    u.variables = r.job->variables;
    selector::AddDeviceVariables(u.device_class->capacity, *u.variables);
  }
  // Only a target_device selector reads the target devices, and only a
  // layout-dependent kernel has one: the others skip the lookup.
  u.selection =
      selector::Select(*u.resolution, VariablesOf(r, u),
                       r.kernel->layout_dependent()
                           ? u.layout->TargetDevicesFor(u.device_class->id)
                           : selector::TargetDevicesView(),
                       r.condition_verdicts);
  return absl::OkStatus();
}

// NodeLayoutText of the unit's layout when the verdict depends on it.
const std::string& LayoutText(const Unit& u) {
  static const std::string* const kNone = new std::string;
  return u.per_layout ? u.layout->text : *kNone;
}

// The class as messages name it: its short name (the full trait form is in
// the answer's fields), with its layout when the verdict depends on it;
// each piece to `put`.
template <typename Put>
void PutUnitName(const Unit& u, Put&& put) {
  put(u.device_class->short_name);
  const std::string& layout = LayoutText(u);
  if (!layout.empty()) {
    put(" on layout ");
    put(layout);
  }
}

std::string UnitName(const Unit& u) {
  std::string name;
  PutUnitName(u, [&name](absl::string_view piece) {
    name.append(piece.data(), piece.size());
  });
  return name;
}

// Text written piece by piece into a buffer on the stack, and into the
// string it makes only when the buffer is full (once at the end for the
// usual few lines): std::string::append per piece cost more than copying.
class TextBuilder {
 public:
  ABSL_ATTRIBUTE_ALWAYS_INLINE void operator()(absl::string_view piece) {
    if (ABSL_PREDICT_FALSE(piece.size() > sizeof(buffer_) - used_)) {
      Spill(piece);
      return;
    }
    std::memcpy(buffer_ + used_, piece.data(), piece.size());
    used_ += piece.size();
  }
  template <typename Number,
            typename = std::enable_if_t<std::is_arithmetic<Number>::value>>
  void operator()(Number number) {
    (*this)(absl::AlphaNum(number).Piece());
  }
  std::string Finish() && {
    Flush();
    return std::move(text_);
  }

 private:
  void Flush() {
    text_.append(buffer_, used_);
    used_ = 0;
  }
  void Spill(absl::string_view piece) {
    Flush();
    if (piece.size() > sizeof(buffer_)) {
      text_.append(piece.data(), piece.size());
    } else {
      std::memcpy(buffer_, piece.data(), piece.size());
      used_ = piece.size();
    }
  }
  char buffer_[512];
  size_t used_ = 0;
  std::string text_;
};

absl::Status NoPlacement(const Request& r, const Units& units,
                         const DeviceScope& scope) {
  std::vector<std::string> why;
  for (const Unit& u : units)
    why.push_back(absl::StrCat(UnitName(u), ": ", u.reason));
  if (units.empty()) why.push_back("the fleet has no live devices");
  for (std::string& reason : scope.Reasons()) why.push_back(std::move(reason));
  return WithErrorInfo(
      absl::FailedPreconditionError(
          absl::StrCat("no live device fits the job for kernel '",
                       r.kernel->kernel(), "': ", absl::StrJoin(why, "; "))),
      kReasonNoFittingDevice,
      {{"kernel", r.kernel->kernel()},
       {"fitting", "0"},
       {"count", absl::StrCat(r.job->count)}});
}

// Writes the answer for device `d` of unit `u` into `c`, a fresh Choice
// where the answer lives (no temporary moved and destroyed per device).
void FillChoice(const Request& r, const Unit& u, const DeviceSlot& d,
                Choice& c) {
  if (!u.selection.base()) c.variant = r.kernel->variants()[u.selection.index];
  c.device = d;  // its own state; the class is shared, not copied
  c.device_class = u.device_class->shared_from_this();
  c.score = u.selection.score;
  c.dynamic = u.selection.dynamic;
  if (u.image != nullptr) c.image = images::ImageId(*u.image);
  for (int index : u.selection.runtime_only) {
    c.runtime_only_variants.push_back(r.kernel->variants()[index]->name);
  }
}

// The winning unit holding `d` (a winner's group has d's class and layout;
// under a node constraint the group is private, so compare those).
const Unit* WinnerOf(absl::Span<Unit* const> ranked, const DeviceSlot& d) {
  for (const Unit* u : ranked) {
    if (!u->winner) break;
    for (const DeviceGroup* g : u->groups) {
      if (&g->device_class() == d.device_class &&
          &g->layout() == &d.group->layout()) {
        return u;
      }
    }
  }
  return nullptr;  // unreachable for devices of the winners' groups
}

// Further devices of the winners, then the best of each other unit by rank.
std::vector<Choice> Alternatives(const Request& r,
                                 absl::Span<Unit* const> ranked,
                                 const DeviceSlot* chosen) {
  std::vector<Choice> out;
  size_t k = static_cast<size_t>(std::max(0, r.top_k));
  out.reserve(k);
  absl::InlinedVector<const DeviceGroup*, 8> winner_groups;
  for (const Unit* u : ranked) {
    if (u->winner) {
      winner_groups.insert(winner_groups.end(), u->groups.begin(),
                           u->groups.end());
    }
  }
  for (const DeviceSlot* d : LeastLoadedDevices(winner_groups, k, chosen)) {
    FillChoice(r, *WinnerOf(ranked, *d), *d, out.emplace_back());
  }
  for (const Unit* u : ranked) {
    if (out.size() >= k) break;
    if (u->winner) continue;
    Policy p =
        r.job->policy == Policy::kPack ? Policy::kPack : Policy::kLeastLoaded;
    if (const DeviceSlot* d = PickDevice(p, u->groups, 0)) {
      FillChoice(r, *u, *d, out.emplace_back());
    }
  }
  if (out.size() > k) out.resize(k);
  return out;
}

std::string Explanation(const Request& r, const Unit& u, const DeviceSlot& d,
                        size_t eligible, size_t winners, int devices,
                        bool better_claimed) {
  // Part of every Select that did not set omit_explanation.
  TextBuilder put;
  if (u.selection.base()) {
    put("the base function of kernel '");
    put(r.kernel->kernel());
    put("' (no variant fits)");
  } else {
    put("variant '");
    put(r.kernel->variants()[u.selection.index]->name);
    put("' (score ");
    put(u.selection.score);
    put(")");
  }
  put(" on device class ");
  PutUnitName(u, put);
  put(": best of ");
  put(eligible);
  put(" eligible classes");
  if (winners > 1) {
    put(", tied with ");
    put(winners - 1);
  }
  if (better_claimed) put(" (every device of the better classes is claimed)");
  if (u.image != nullptr) {
    put("; runs image ");
    put(images::ImageId(*u.image));
    if (!u.image_note.empty()) {
      put(" (");
      put(u.image_note);
      put(")");
    }
  }
  if (u.selection.dynamic) {
    put("; dynamic, chosen for this job's variables (");
    put(u.selection.evaluated);
    put(" dynamic candidates evaluated)");
  }
  if (!u.selection.runtime_only.empty()) {
    put("; ranked above it with a runtime-only condition the program "
        "decides: ");
    for (size_t i = 0; i < u.selection.runtime_only.size(); ++i) {
      put(i == 0 ? "'" : ", '");
      put(r.kernel->variants()[u.selection.runtime_only[i]]->name);
      put("'");
    }
  }
  put(".\n");
  put(PolicyName(r.job->policy));
  put(" picked device '");
  put(d.id);
  put("' on node '");
  put(d.node);
  put("' (utilisation ");
  put(d.properties.utilisation);
  put(") among ");
  put(devices);
  put(" devices.");
  return std::move(put).Finish();
}

ClassReport Report(const Request& r, const Unit& u) {
  ClassReport c;
  c.device_class = u.device_class->name;
  c.device_class_short_name = u.device_class->short_name;
  c.traits = u.device_class->traits;
  c.sycl_architecture = u.device_class->sycl_architecture;
  c.capacity = u.device_class->capacity;
  c.node_layout = LayoutText(u);
  c.device_count = u.device_count;
  c.eligible_device_count = u.eligible_count;
  c.suspect_device_count = u.suspect_count;
  c.unhealthy_device_count = u.unhealthy_count;
  c.cordoned_device_count = u.cordoned_count;
  c.eligible = u.eligible();
  c.reason = u.reason;
  c.winner = u.winner;
  if (u.image != nullptr) {
    c.image = images::ImageId(*u.image);
    c.image_note = u.image_note;
  }
  if (u.resolution.has_value()) {
    c.explanation =
        selector::Explain(*u.resolution, u.selection, VariablesOf(r, u),
                          u.layout->TargetDevicesFor(u.device_class->id));
  }
  return c;
}

absl::StatusOr<Decision> DecideAmong(const Request& r,
                                     const Fleet::Reader& fleet,
                                     bool include_suspect) {
  DeviceScope scope(*r.job, fleet);
  Units units = MakeUnits(r, fleet, scope, include_suspect);
  UnitPtrs ranked;
  ranked.reserve(units.size());
  UnitPtrs fitting_units;  // the units whose class fits the job
  absl::InlinedVector<const DeviceClass*, 8> classes;
  fitting_units.reserve(units.size());
  for (Unit& u : units) {
    if (u.eligible_count == 0) {
      u.reason =
          u.device_count == 0 && u.suspect_count > 0
              ? absl::StrCat("all ", u.suspect_count,
                             " devices are on suspect nodes (heartbeat "
                             "overdue) or degraded")
          : u.device_count == 0 && u.unhealthy_count + u.cordoned_count > 0
              ? absl::StrCat("all ", u.unhealthy_count + u.cordoned_count,
                             " devices are unhealthy (", u.unhealthy_count,
                             ") or cordoned (", u.cordoned_count, ")")
          : r.job->allowed_devices.empty()
              ? "no device on the job's nodes"
              : "no device of the job's allowed_devices";
      continue;
    }
    CheckFilter(r, u);
    if (!u.eligible()) continue;
    fitting_units.push_back(&u);
  }
  // Each fitting unit's static resolution: the request's own (resolved
  // with no fleet lock held), else the kernel's cached one, looked up for
  // every class under one hold of its lock. A class with neither goes to
  // Request::unresolved, or without it is resolved here.
  absl::InlinedVector<std::optional<absl::StatusOr<selector::Resolution>>, 8>
      found(fitting_units.size());
  // Indexes of `classes` into fitting_units.
  absl::InlinedVector<size_t, 8> looked_up;
  for (size_t i = 0; i < fitting_units.size(); ++i) {
    const int id = fitting_units[i]->device_class->id;
    if (r.resolved != nullptr) {
      if (auto it = r.resolved->find(id); it != r.resolved->end()) {
        found[i] = it->second;
        continue;
      }
    }
    classes.push_back(fitting_units[i]->device_class);
    looked_up.push_back(i);
  }
  absl::InlinedVector<std::optional<selector::Resolution>, 8> cached(
      classes.size());
  r.kernel->Cached(*r.signature, classes, absl::MakeSpan(cached), r.counters);
  for (size_t j = 0; j < looked_up.size(); ++j) {
    if (cached[j].has_value()) found[looked_up[j]] = *std::move(cached[j]);
  }
  for (size_t i = 0; i < fitting_units.size(); ++i) {
    Unit& u = *fitting_units[i];
    if (!found[i].has_value()) {
      const DeviceClass& c = *u.device_class;
      if (r.unresolved != nullptr) {
        r.unresolved->push_back({c.id, r.signature->ContextFor(c)});
        continue;
      }
      found[i] = r.kernel->ResolveFor(
          *r.signature, c.id, r.signature->ContextFor(c),
          r.explain ? CacheUse::kReadOnly : CacheUse::kFill);
    }
    CTXSEL_RETURN_IF_ERROR(Evaluate(r, u, *std::move(found[i])));
    if (r.job->require_variant && u.selection.base()) {
      u.reason = "require_variant: no variant fits, only the base function";
      continue;
    }
    ranked.push_back(&u);
  }
  if (r.unresolved != nullptr && !r.unresolved->empty()) {
    return absl::AbortedError("classes left to resolve without the lock");
  }
  auto better = [](const Unit* a, const Unit* b) {
    return a->rank() > b->rank();
  };
  if (ranked.size() <= 16) {
    // A few units: insertion sort, as stable as stable_sort, without the
    // buffer stable_sort allocates.
    for (size_t i = 1; i < ranked.size(); ++i) {
      Unit* u = ranked[i];
      size_t j = i;
      for (; j > 0 && better(u, ranked[j - 1]); --j) ranked[j] = ranked[j - 1];
      ranked[j] = u;
    }
  } else {
    std::stable_sort(ranked.begin(), ranked.end(), better);
  }
  // Made in its StatusOr, which is returned (not moved into one).
  absl::StatusOr<Decision> decided(absl::in_place);
  Decision& d = *decided;
  Placement& placement = r.placement != nullptr ? *r.placement : d.placement;
  // The units of equal rank compete together, best rank first; a lower
  // rank gets its turn only when a claiming Select found no device with
  // room among the better ones (without claims the first pick succeeds).
  const Pickable pickable{r.claims};
  const DeviceSlot* chosen = nullptr;
  size_t tier = 0;  // first unit of the competing rank
  size_t winners = 0;
  int devices = 0;
  int fitting = 0;
  for (; tier < ranked.size() && chosen == nullptr; tier += winners) {
    absl::InlinedVector<const DeviceGroup*, 8> groups;
    winners = 0;
    devices = 0;
    for (size_t i = tier; i < ranked.size(); ++i) {
      if (ranked[i]->rank() != ranked[tier]->rank()) break;
      ++winners;
      devices += ranked[i]->eligible_count;
      groups.insert(groups.end(), ranked[i]->groups.begin(),
                    ranked[i]->groups.end());
    }
    fitting += devices;
    chosen = PickDevice(r.job->policy, groups, r.spread_ticket, pickable);
    if (chosen == nullptr) continue;
    for (size_t i = tier; i < tier + winners; ++i) ranked[i]->winner = true;
    // Ranked from the winners on, as WinnerOf and Alternatives expect.
    absl::Span<Unit* const> rest = absl::MakeConstSpan(ranked).subspan(tier);
    const Unit* unit = WinnerOf(rest, *chosen);
    FillChoice(r, *unit, *chosen, placement.choice);
    if (r.job->explanation) {
      placement.explanation = Explanation(r, *unit, *chosen, ranked.size(),
                                          winners, devices, tier > 0);
    }
    placement.alternatives = Alternatives(r, rest, chosen);
  }
  if (chosen == nullptr && ranked.empty()) {
    d.status = NoPlacement(r, units, scope);
  } else if (chosen == nullptr) {
    d.status =
        WithErrorInfo(absl::ResourceExhaustedError(absl::StrCat(
                          "all ", fitting, " fitting devices are claimed")),
                      kReasonClaimsExhausted,
                      {{"kernel", r.kernel->kernel()},
                       {"fitting", absl::StrCat(fitting)},
                       {"count", absl::StrCat(r.job->count)}});
  }
  if (r.explain) {
    for (const Unit& u : units) d.classes.push_back(Report(r, u));
  }
  return decided;
}

}  // namespace

absl::StatusOr<Decision> Decide(const Request& r, const Fleet::Reader& fleet) {
  if (!fleet.has_suspect()) {
    return DecideAmong(r, fleet, /*include_suspect=*/false);  // not moved
  }
  absl::StatusOr<Decision> healthy =
      DecideAmong(r, fleet, /*include_suspect=*/false);
  if (!healthy.ok() || healthy->status.ok()) return healthy;
  return DecideAmong(r, fleet, /*include_suspect=*/true);
}

}  // namespace ctxsel::server::placement::internal
