// coverage.h: where a kernel's code actually runs — for every device class
// of the live fleet, the variant it gets for a job context, and what-if
// reports for a changed variant set or added hypothetical nodes.
//
// Built from the same static Resolutions Select uses (kernel_entry.h), under
// the same shared Fleet::Reader, in O(units x points) with no per-device
// work, so coverage queries do not slow Select. A what-if report resolves
// against a private KernelEntry that is never published, and hypothetical
// nodes become private classes and layouts that never enter the Fleet.
//
//   CoverageQuery q;
//   q.job.kernel = "saxpy";
//   q.variable_ranges = {{"N", {1, 4096}}};
//   absl::StatusOr<CoverageReport> r = placer.Coverage(q);
//   for (const CoveragePoint& p : r->points) ...
#ifndef CTXSEL_SERVER_PLACEMENT_COVERAGE_H_
#define CTXSEL_SERVER_PLACEMENT_COVERAGE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "selector/selector.h"
#include "server/model/model.h"

namespace ctxsel::server::placement {

// Job points beyond this many (construct lists x variable values) are an
// InvalidArgumentError.
inline constexpr int kMaxCoveragePoints = 4096;

struct CoverageQuery {
  // The kernel and the job context: construct, implementation, variables
  // (nodes, device_filter, policy and top_k are not read). With no
  // variables at all, classes whose verdict needs them are reported as
  // depending on variables; with some, every variable the kernel's
  // selectors read must be given, as for Select.
  Job job;
  // Several construct sets, one matrix row each; empty: job.construct.
  std::vector<std::vector<selector::ConstructTrait>> construct_lists;
  // Variables taking several values (overriding job.variables); the points
  // are every combination, in the order given.
  std::vector<std::pair<std::string, std::vector<int64_t>>> variable_ranges;
  // What-if: variants added (or replacing the registered one of the same
  // name) and registered variants left out. Never stored.
  std::vector<Variant> with_variants;
  std::vector<std::string> without_variants;
  // What-if: devices of hypothetical nodes (normalised, as a node report
  // is), never inserted into the fleet.
  std::vector<Device> hypothetical_devices;

  bool what_if() const {
    return !with_variants.empty() || !without_variants.empty() ||
           !hypothetical_devices.empty();
  }
};

enum class CoverageOutcome {
  kVariant,  // one variant, whatever the variables
  kBase,     // no variant fits: the base function
  kDepends,  // dynamic candidates decide (no variables given)
};

// A dynamic candidate that decides a class's variant, in the order the
// engine tries them; the last may be the static fallback.
struct DecidingCandidate {
  std::string variant;
  std::string selector;  // canonical text, showing the conditions
  uint64_t score = 0;
  bool dynamic = true;
};

// One device class (or one class on one node layout when the kernel has a
// `target_device` selector) at one job point.
struct ClassCoverage {
  std::string device_class;  // the long class name (device_class.h)
  std::string device_class_short_name;
  // NodeLayoutText of the layout; empty when not per layout.
  std::string node_layout;
  bool hypothetical = false;  // some of its devices are hypothetical
  int device_count = 0;
  int node_count = 0;
  CoverageOutcome outcome = CoverageOutcome::kBase;
  std::string variant;  // with kVariant
  uint64_t score = 0;
  bool dynamic = false;  // the variant was chosen by a dynamic part
  std::vector<DecidingCandidate> deciding;  // with kDepends
  // Other variants with the chosen one's score: declaration order decided.
  std::vector<std::string> tied_with;
  // With images (Job::images, else KernelEntry::images): the one that would
  // run and why a generic one runs; `no_image` when the class runs none.
  std::string image;
  std::string image_note;
  bool no_image = false;

  // The variant name, "" for the base, "?" when variables decide.
  std::string OutcomeKey() const;
};

// Devices and nodes that get one outcome (a variant, the base, or
// "depends on variables").
struct OutcomeShare {
  CoverageOutcome outcome = CoverageOutcome::kBase;
  std::string variant;
  int device_count = 0;
  int node_count = 0;  // nodes with at least one such device
};

// How a class's verdict differs from today's (what-if reports only).
struct ClassChange {
  std::string device_class;
  std::string device_class_short_name;
  std::string node_layout;  // as ClassCoverage's
  bool new_class = false;   // only hypothetical nodes have it
  std::string before;       // ClassCoverage::OutcomeKey() today
  std::string after;
  bool gains_base_only = false;
  bool loses_base_only = false;
};

struct CoveragePoint {
  std::vector<selector::ConstructTrait> construct;
  selector::Variables variables;       // as given; empty: symbolic
  std::vector<ClassCoverage> classes;  // by class name, then layout
  std::vector<OutcomeShare> shares;    // variants (declaration order), base,
                                       // depends; only those with devices
  int device_count = 0;
  int node_count = 0;
  double base_only_share = 0;        // of the devices
  std::vector<ClassChange> changes;  // what-if only
};

struct CoverageReport {
  std::string kernel;
  bool what_if = false;
  // The variant set reported on (today's, or the what-if set), in
  // declaration order.
  std::vector<std::string> variants;
  std::vector<CoveragePoint> points;
  // Variants no class gets (or may get) at any point: dead code in this
  // fleet.
  std::vector<std::string> dead_variants;
};

namespace internal {
class Fleet;
class KernelEntry;

// The report for `query` over `fleet`, with `live` the kernel's published
// entry (null when it has no registered variants). InvalidArgumentError
// naming the field for a bad query, NotFoundError when the kernel has no
// variants and the query adds none.
absl::StatusOr<CoverageReport> Cover(const KernelEntry* live,
                                     const CoverageQuery& query,
                                     const Fleet& fleet, int max_signatures);
}  // namespace internal

}  // namespace ctxsel::server::placement

#endif  // CTXSEL_SERVER_PLACEMENT_COVERAGE_H_
