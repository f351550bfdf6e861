#include "server/placement/coverage.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "images/device_image.h"
#include "selector/device_variables.h"
#include "selector/job_check.h"
#include "server/model/kernel_errors.h"
#include "server/placement/device_class.h"
#include "server/placement/fleet.h"
#include "server/placement/kernel_entry.h"

namespace ctxsel::server::placement {

std::string ClassCoverage::OutcomeKey() const {
  switch (outcome) {
    case CoverageOutcome::kVariant:
      return variant;
    case CoverageOutcome::kBase:
      return "";
    case CoverageOutcome::kDepends:
      return "?";
  }
  return "";
}

namespace internal {
namespace {

// A device class, or a class on one node layout when the kernel's verdict
// depends on the layout (as decision.cc's units).
struct Unit {
  std::string key;  // class key, plus the layout key when per layout
  const DeviceClass* device_class = nullptr;
  const NodeLayout* layout = nullptr;  // gives the target devices
  std::string layout_text;             // empty when not per layout
  int devices = 0;
  int nodes = 0;
  bool hypothetical = false;
};

// Nodes that share a layout, and the units their devices belong to.
struct LayoutNodes {
  int nodes = 0;
  std::vector<int> units;
};

// The units of the live fleet plus the hypothetical nodes. Hypothetical
// devices of a live class (or layout) join it; new ones get private classes
// and layouts with negative ids, owned here, never seen by the Fleet.
class Units {
 public:
  Units(const Fleet::Reader& fleet, bool per_layout,
        const std::vector<Device>& hypothetical)
      : per_layout_(per_layout) {
    absl::flat_hash_map<std::string, const DeviceClass*> live_classes;
    absl::flat_hash_map<std::string, const NodeLayout*> live_layouts;
    // Layout key -> class id -> nodes, so that a layout's nodes are
    // counted once however many classes (and health groups) it has.
    std::map<std::string, std::map<int, int>> layout_class_nodes;
    for (const DeviceGroup* g : fleet.groups()) {
      const DeviceClass& c = g->device_class();
      live_classes[c.key] = &c;
      live_layouts[g->layout().key] = &g->layout();
      Unit& u = UnitFor(c, g->layout());
      u.devices += static_cast<int>(g->size());
      u.nodes += static_cast<int>(g->node_count());
      layout_class_nodes[g->layout().key][c.id] +=
          static_cast<int>(g->node_count());
      AddToLayout(g->layout().key, IndexOf(u));
    }
    for (auto& [key, by_class] : layout_class_nodes) {
      layouts_[key].nodes = by_class.begin()->second;
    }
    std::map<std::string, std::vector<const Device*>> by_node;
    for (const Device& d : hypothetical) by_node[d.node].push_back(&d);
    for (const auto& [node, devices] : by_node) {
      std::vector<std::pair<int32_t, const DeviceClass*>> slots;
      for (const Device* d : devices) {
        const selector::DeviceCapacity capacity = ClassCapacityOf(*d);
        const std::string key =
            DeviceClassKey(d->traits, d->sycl_architecture, capacity);
        const DeviceClass*& c = live_classes[key];
        if (c == nullptr) {
          owned_classes_.push_back(std::make_unique<DeviceClass>(
              MakeDeviceClass(-static_cast<int>(owned_classes_.size()) - 1,
                              d->traits, d->sycl_architecture, capacity)));
          c = owned_classes_.back().get();
        }
        slots.emplace_back(d->index, c);
      }
      const std::string layout_key = NodeLayoutKey(slots);
      const NodeLayout*& layout = live_layouts[layout_key];
      if (layout == nullptr) {
        owned_layouts_.push_back(std::make_unique<NodeLayout>(MakeNodeLayout(
            -static_cast<int>(owned_layouts_.size()) - 1, slots)));
        layout = owned_layouts_.back().get();
      }
      layouts_[layout_key].nodes += 1;
      absl::flat_hash_set<int> counted;  // the node counts once per unit
      for (const auto& [index, c] : slots) {
        Unit& u = UnitFor(*c, *layout);
        u.devices += 1;
        u.hypothetical = true;
        if (counted.insert(IndexOf(u)).second) u.nodes += 1;
        AddToLayout(layout_key, IndexOf(u));
      }
    }
  }

  const std::vector<Unit>& units() const { return units_; }
  const std::map<std::string, LayoutNodes>& layouts() const { return layouts_; }

 private:
  Unit& UnitFor(const DeviceClass& c, const NodeLayout& layout) {
    std::string key = c.key;
    if (per_layout_) absl::StrAppend(&key, "|", layout.key);
    auto [it, inserted] = index_.try_emplace(key, units_.size());
    if (inserted) {
      units_.emplace_back();
      Unit& u = units_.back();
      u.key = std::move(key);
      u.device_class = &c;
      u.layout = &layout;
      if (per_layout_) u.layout_text = layout.text;
    }
    return units_[it->second];
  }
  int IndexOf(const Unit& u) const { return static_cast<int>(&u - &units_[0]); }
  void AddToLayout(const std::string& layout_key, int unit) {
    std::vector<int>& v = layouts_[layout_key].units;
    if (std::find(v.begin(), v.end(), unit) == v.end()) v.push_back(unit);
  }

  const bool per_layout_;
  std::vector<Unit> units_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::map<std::string, LayoutNodes> layouts_;
  std::vector<std::unique_ptr<DeviceClass>> owned_classes_;
  std::vector<std::unique_ptr<NodeLayout>> owned_layouts_;
};

// One job point of the matrix.
struct Point {
  Job job;  // construct and variables of this point
  JobSignature signature;
};

absl::StatusOr<std::vector<Point>> MakePoints(const CoverageQuery& q) {
  std::vector<std::vector<selector::ConstructTrait>> constructs =
      q.construct_lists;
  if (constructs.empty()) constructs.push_back(q.job.construct);
  size_t count = constructs.size();
  for (size_t i = 0; i < q.variable_ranges.size(); ++i) {
    const auto& [name, values] = q.variable_ranges[i];
    if (name.empty()) {
      return FieldViolation(absl::StrCat("variable_ranges[", i, "].name"),
                            "empty");
    }
    if (values.empty()) {
      return WithFieldViolation(
          absl::InvalidArgumentError(
              absl::StrCat("variable_ranges[", i, "] (", name, "): no values")),
          absl::StrCat("variable_ranges[", i, "].values"), "no values");
    }
    count *= values.size();
    if (count > static_cast<size_t>(kMaxCoveragePoints)) break;
  }
  if (count > static_cast<size_t>(kMaxCoveragePoints)) {
    const std::string more =
        absl::StrCat("more than ", kMaxCoveragePoints, " job points");
    return WithFieldViolation(absl::InvalidArgumentError(absl::StrCat(
                                  "construct_lists x variable_ranges: ", more)),
                              "variable_ranges", more);
  }
  std::vector<Point> points;
  const size_t combinations = count / constructs.size();
  for (const auto& construct : constructs) {
    // Mixed radix over the ranges, the last varying fastest.
    for (size_t n = 0; n < combinations; ++n) {
      Point p;
      p.job = q.job;
      p.job.construct = construct;
      size_t rest = n;
      for (size_t i = q.variable_ranges.size(); i-- > 0;) {
        const auto& [name, values] = q.variable_ranges[i];
        p.job.variables[name] = values[rest % values.size()];
        rest /= values.size();
      }
      p.signature = JobSignature::Of(p.job);
      points.push_back(std::move(p));
    }
  }
  return points;
}

// Whether the candidate reads a job variable (device variables are the
// class's: known here).
bool ReadsVariables(const selector::Resolution& res,
                    const selector::Resolution::Entry& e) {
  for (const std::string& name : res.declared()[e.index].selector.variables()) {
    if (!selector::IsDeviceVariable(name)) return true;
  }
  return false;
}

// The verdict of `kernel` on `u` at `p` (see ClassCoverage).
absl::StatusOr<ClassCoverage> Judge(const KernelEntry& kernel, const Unit& u,
                                    const Point& p) {
  absl::StatusOr<selector::Resolution> res = kernel.Resolution(
      p.signature, *u.device_class, /*counters=*/nullptr, CacheUse::kReadOnly);
  if (!res.ok()) {
    return WithFieldViolation(absl::InvalidArgumentError(absl::StrCat(
                                  "job: ", res.status().message())),
                              "job", res.status().message());
  }
  ClassCoverage c;
  c.device_class = u.device_class->name;
  c.device_class_short_name = u.device_class->short_name;
  c.node_layout = u.layout_text;
  c.hypothetical = u.hypothetical;
  c.device_count = u.devices;
  c.node_count = u.nodes;
  const std::vector<images::DeviceImage>& all =
      p.job.images.empty() ? kernel.images() : p.job.images;
  if (!all.empty()) {
    const images::DeviceImage* image = images::BestImage(
        all, u.device_class->traits, /*fit=*/nullptr, &c.image_note);
    c.no_image = image == nullptr;
    if (image != nullptr) c.image = images::ImageId(*image);
  }
  const auto& sorted = res->candidates();
  const size_t prefix = res->dynamic_prefix_size();
  if (p.job.variables.empty()) {
    bool needs_variables = false;
    for (size_t i = 0; i < prefix; ++i) {
      needs_variables |= sorted[i].dynamic && ReadsVariables(*res, sorted[i]);
    }
    if (needs_variables) {
      c.outcome = CoverageOutcome::kDepends;
      for (size_t i = 0; i < prefix; ++i) {
        const selector::Candidate& d = res->declared()[sorted[i].index];
        c.deciding.push_back(DecidingCandidate{
            d.name, d.selector.ToString(), sorted[i].score, sorted[i].dynamic});
      }
      return c;
    }
  }
  selector::Variables variables = p.job.variables;
  if (kernel.reads_device_variables()) {
    selector::AddDeviceVariables(u.device_class->capacity, variables);
  }
  const selector::Selection s = selector::Select(
      *res, variables, u.layout->TargetDevicesFor(u.device_class->id));
  if (s.base()) {
    c.outcome = CoverageOutcome::kBase;
    return c;
  }
  c.outcome = CoverageOutcome::kVariant;
  c.variant = kernel.variants()[s.index]->name;
  c.score = s.score;
  c.dynamic = s.dynamic;
  // Candidates after the chosen one with its score lost only by
  // declaration order.
  bool after = false;
  for (const selector::Resolution::Entry& e : sorted) {
    if (after && e.score == s.score) {
      c.tied_with.push_back(kernel.variants()[e.index]->name);
    }
    after |= e.index == s.index;
  }
  return c;
}

absl::StatusOr<CoveragePoint> Cover(const KernelEntry* kernel,
                                    const Units& units, const Point& p) {
  CoveragePoint out;
  out.construct = p.job.construct;
  out.variables = p.job.variables;
  for (const Unit& u : units.units()) {
    ClassCoverage c;
    if (kernel != nullptr) {
      CTXSEL_ASSIGN_OR_RETURN(ClassCoverage judged, Judge(*kernel, u, p));
      c = std::move(judged);
    } else {
      c.device_class = u.device_class->name;
      c.device_class_short_name = u.device_class->short_name;
      c.node_layout = u.layout_text;
      c.device_count = u.devices;
      c.node_count = u.nodes;
    }
    out.classes.push_back(std::move(c));
  }
  // Shares: devices per outcome; nodes through their layouts, so a node
  // with two classes that get the same variant counts once.
  std::vector<std::string> order;
  if (kernel != nullptr) {
    for (const auto& v : kernel->variants()) order.push_back(v->name);
  }
  order.push_back("");
  order.push_back("?");
  std::map<std::string, OutcomeShare> shares;
  for (const ClassCoverage& c : out.classes) {
    OutcomeShare& s = shares[c.OutcomeKey()];
    s.outcome = c.outcome;
    s.variant = c.variant;
    s.device_count += c.device_count;
    out.device_count += c.device_count;
  }
  for (const auto& [key, layout] : units.layouts()) {
    absl::flat_hash_set<std::string> seen;
    for (int unit : layout.units) {
      std::string outcome = out.classes[unit].OutcomeKey();
      if (seen.insert(outcome).second)
        shares[outcome].node_count += layout.nodes;
    }
    out.node_count += layout.nodes;
  }
  for (const std::string& key : order) {
    auto it = shares.find(key);
    if (it != shares.end()) out.shares.push_back(it->second);
  }
  if (auto it = shares.find(""); it != shares.end() && out.device_count > 0) {
    out.base_only_share =
        static_cast<double>(it->second.device_count) / out.device_count;
  }
  std::stable_sort(out.classes.begin(), out.classes.end(),
                   [](const ClassCoverage& a, const ClassCoverage& b) {
                     return std::tie(a.device_class, a.node_layout) <
                            std::tie(b.device_class, b.node_layout);
                   });
  return out;
}

std::vector<ClassChange> Diff(const CoveragePoint& today,
                              const CoveragePoint& what_if) {
  std::map<std::pair<std::string, std::string>, std::string> before;
  for (const ClassCoverage& c : today.classes) {
    before[{c.device_class, c.node_layout}] = c.OutcomeKey();
  }
  std::vector<ClassChange> changes;
  for (const ClassCoverage& c : what_if.classes) {
    ClassChange change;
    change.device_class = c.device_class;
    change.device_class_short_name = c.device_class_short_name;
    change.node_layout = c.node_layout;
    change.after = c.OutcomeKey();
    auto it = before.find({c.device_class, c.node_layout});
    if (it == before.end()) {
      change.new_class = true;
    } else {
      if (it->second == change.after) continue;
      change.before = it->second;
      change.gains_base_only = change.after.empty();
      change.loses_base_only = change.before.empty();
    }
    changes.push_back(std::move(change));
  }
  return changes;
}

// The registered variants with the query's additions and removals.
absl::StatusOr<std::shared_ptr<KernelEntry>> WhatIfEntry(
    const KernelEntry* live, const CoverageQuery& q, int max_signatures) {
  std::vector<Variant> variants;
  int64_t next_order = 0;
  if (live != nullptr) {
    for (const auto& v : live->variants()) {
      variants.push_back(*v);
      next_order = std::max(next_order, v->order + 1);
    }
  }
  for (size_t i = 0; i < q.without_variants.size(); ++i) {
    const std::string& name = q.without_variants[i];
    auto it = std::find_if(variants.begin(), variants.end(),
                           [&](const Variant& v) { return v.name == name; });
    if (it == variants.end()) {
      return FieldViolation(absl::StrCat("without_variants[", i, "]"),
                            absl::StrCat("kernel '", q.job.kernel,
                                         "' has no variant '", name, "'"));
    }
    variants.erase(it);
  }
  for (const Variant& with : q.with_variants) {
    Variant v = with;
    v.kernel = q.job.kernel;
    auto it =
        std::find_if(variants.begin(), variants.end(),
                     [&](const Variant& old) { return old.name == v.name; });
    if (it != variants.end()) {
      v.order = it->order;  // a replacement keeps its place
      *it = std::move(v);
    } else {
      v.order = next_order++;
      variants.push_back(std::move(v));
    }
  }
  return KernelEntry::Make(q.job.kernel, std::move(variants), max_signatures);
}

absl::Status CheckVariables(const KernelEntry* kernel,
                            const std::vector<Point>& points) {
  if (kernel == nullptr) return absl::OkStatus();
  for (const Point& p : points) {
    if (p.job.variables.empty()) continue;  // symbolic
    if (absl::Status s =
            selector::CheckVariablesGiven(kernel->variables(), p.job.variables);
        !s.ok()) {
      return MissingJobVariables(s);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CoverageReport> Cover(const KernelEntry* live,
                                     const CoverageQuery& q, const Fleet& fleet,
                                     int max_signatures) {
  if (q.job.kernel.empty()) {
    return WithFieldViolation(absl::InvalidArgumentError("kernel: empty"),
                              "job.kernel", "empty");
  }
  if (live == nullptr && q.with_variants.empty()) {
    return KernelNotFound(q.job.kernel);
  }
  CTXSEL_ASSIGN_OR_RETURN(std::vector<Point> points, MakePoints(q));
  std::shared_ptr<KernelEntry> what_if;
  if (q.what_if()) {
    CTXSEL_ASSIGN_OR_RETURN(std::shared_ptr<KernelEntry> made,
                            WhatIfEntry(live, q, max_signatures));
    what_if = std::move(made);
  }
  const KernelEntry* reported = what_if != nullptr ? what_if.get() : live;
  CTXSEL_RETURN_IF_ERROR(CheckVariables(live, points));
  CTXSEL_RETURN_IF_ERROR(CheckVariables(reported, points));

  const bool per_layout = (live != nullptr && live->layout_dependent()) ||
                          reported->layout_dependent();
  CoverageReport report;
  report.kernel = q.job.kernel;
  report.what_if = q.what_if();
  for (const auto& v : reported->variants()) report.variants.push_back(v->name);
  absl::flat_hash_set<std::string> reachable;
  Fleet::Reader reader(fleet);
  Units units(reader, per_layout, q.hypothetical_devices);
  std::optional<Units> today_units;
  if (report.what_if)
    today_units.emplace(reader, per_layout, std::vector<Device>{});
  for (const Point& p : points) {
    CTXSEL_ASSIGN_OR_RETURN(CoveragePoint point, Cover(reported, units, p));
    if (today_units.has_value()) {
      CTXSEL_ASSIGN_OR_RETURN(CoveragePoint today,
                              Cover(live, *today_units, p));
      point.changes = Diff(today, point);
    }
    for (const ClassCoverage& c : point.classes) {
      if (c.outcome == CoverageOutcome::kVariant) reachable.insert(c.variant);
      for (const DecidingCandidate& d : c.deciding) reachable.insert(d.variant);
    }
    report.points.push_back(std::move(point));
  }
  for (const std::string& v : report.variants) {
    if (!reachable.contains(v)) report.dead_variants.push_back(v);
  }
  return report;
}

}  // namespace internal
}  // namespace ctxsel::server::placement
