// selector.h: the front door of the OpenMP context-selector engine.
//
// An OpenMP context selector (`construct={teams,parallel},
// device={arch(nvptx)}, user={condition(N>32)}`) says in which OpenMP context a
// function or directive variant applies. This library parses and validates
// selectors exactly as OpenMP 5.1/5.2 defines them, matches them against a
// `Context`, scores them with the specification's algorithm and picks a
// variant.
//
// The work is split the way the OpenMP `declare variant` rules split it:
//   * `Resolve()` does all static work once for a list of candidates and the
//     static part of a context (construct, device and implementation trait
//     sets): static compatibility, scores, the sorted replacement-candidate
//     list and its dynamic prefix.
//   * `Select()` is the cheap per-request step: it walks only the dynamic
//     prefix, evaluating `user={condition(...)}` and `target_device` sets
//     against the request's variables and target devices.
//   * `Explain()` gives the per-candidate breakdown (why compatible or not,
//     score terms) and renders it as text for bug reports.
//
// Example:
//
//   ctxsel::selector::Context ctx;
//   ctxsel::selector::AddConstruct(ctx, "target");
//   ctx.device.kind = {"gpu", "nohost"};
//   ctx.device.arch = {"nvptx"};
//   std::vector<ctxsel::selector::Candidate> candidates;
//   for (const auto& [name, text] : variants) {
//     absl::StatusOr<ctxsel::selector::Selector> s =
//         ctxsel::selector::Selector::Parse(text);
//     if (!s.ok()) return s.status();  // "1:9: unknown trait set 'devce'"
//     candidates.push_back({name, *std::move(s)});
//   }
//   absl::StatusOr<ctxsel::selector::Resolution> r =
//       ctxsel::selector::Resolve(candidates, ctx);
//   ...
//   ctxsel::selector::Selection pick =
//       ctxsel::selector::Select(*r, ctx.variables, ctx.target_devices);
//   if (pick.base()) { /* call the base function */ }
//
// The library does no I/O, is thread-compatible, and `Selector` and
// `Resolution` are immutable and may be shared across threads.
#ifndef CTXSEL_SELECTOR_SELECTOR_H_
#define CTXSEL_SELECTOR_SELECTOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "selector/selector_error.h"

namespace ctxsel::selector {

namespace internal {
struct SelectorAst;
struct ResolutionData;
}  // namespace internal

// Which directive a selector belongs to; a few rules depend on it
// (`construct={simd}` is not allowed in `begin declare variant`; in a
// `metadirective` `simd` takes no properties).
enum class Directive { kDeclareVariant, kBeginDeclareVariant, kMetadirective };

// Parses "declare_variant", "begin_declare_variant" or "metadirective".
absl::StatusOr<Directive> ParseDirective(absl::string_view name);
absl::string_view DirectiveName(Directive directive);

// Inputs larger than this are rejected by `Selector::Parse`.
inline constexpr size_t kMaxSelectorBytes = 64 * 1024;
// Brackets and expression operators may nest at most this deep. Canonical
// text never nests deeper than the text it came from, so it parses again.
inline constexpr int kMaxNestingDepth = 64;
// Contexts with more construct traits than this are rejected by `Resolve`
// (scores are 64-bit: 2^(l+2) must fit).
inline constexpr int kMaxConstructTraits = 60;

// A parsed, validated context selector. Cheap to copy (the syntax tree is
// shared and immutable).
class Selector {
 public:
  // Parses and validates `text`. On error returns InvalidArgumentError with a
  // message "L:C: what is wrong" (1-based line and column of the offending
  // text), e.g. "1:27: score() is not allowed in the device trait set";
  // GetSelectorError() (selector_error.h) gives its positions as data.
  static absl::StatusOr<Selector> Parse(
      absl::string_view text, Directive directive = Directive::kDeclareVariant);

  // True when the selector has a `target_device` set or a `condition` that is
  // not a constant expression: its compatibility depends on the request.
  bool is_dynamic() const;

  // True when the selector has a `target_device` trait set (after merging,
  // for an effective selector): its verdict depends on which devices a node
  // has, not only on the device a variant runs on.
  bool has_target_device() const;

  // Canonical text: sets in vocabulary order, unordered lists sorted,
  // constant expressions folded, construct order kept. Two selectors are
  // equivalent iff their canonical texts are equal.
  std::string ToString() const;

  // The job variables its expressions read (condition, device_num, score),
  // sorted: a job must give each for the selector to be judged. The
  // identifiers of a runtime-only condition are the program's, not job
  // variables.
  std::vector<std::string> variables() const;

  // The trait sets it names ("device", "user", ...), each with where it is
  // written, in the order written: for callers that accept only some sets
  // (a device filter, server/fleet/device_filter.h).
  std::vector<std::pair<std::string, TextPosition>> trait_sets() const;

  Directive directive() const;

  friend bool operator==(const Selector& a, const Selector& b) {
    return a.ToString() == b.ToString();
  }
  friend bool operator!=(const Selector& a, const Selector& b) {
    return !(a == b);
  }

  // For the engine's own files; callers never need the syntax tree.
  const internal::SelectorAst& ast() const { return *ast_; }
  explicit Selector(std::shared_ptr<const internal::SelectorAst> ast)
      : ast_(std::move(ast)) {}

 private:
  std::shared_ptr<const internal::SelectorAst> ast_;
};

// The effective selector of a `declare variant` nested in a
// `begin declare variant` (OpenMP 5.1 §2.3.5): the outer selector's trait
// selectors are appended to the inner one's, set by set, after removing those
// equivalent to one already in the inner set. The result is validated again,
// so e.g. two different `kind` selectors in one set is an error; its
// positions say which selector text they are in (TextPosition::text: 0 the
// inner's texts, then the outer's) and its context names both selectors.
absl::StatusOr<Selector> EffectiveSelector(const Selector& inner,
                                           const Selector& outer);

// ---------------------------------------------------------------------------
// The OpenMP context.

using NameSet = absl::flat_hash_set<std::string>;
// Job variables referenced by `condition`, `device_num` expressions.
using Variables = absl::flat_hash_map<std::string, int64_t>;

// The step of a `linear` clause: an integer constant (1 when the clause
// gives none; negative and zero steps are allowed) or, as OpenMP 5.2 allows
// in `declare simd`, a variable of the same simd's `uniform` clause.
struct LinearStep {
  int64_t constant = 1;  // the step when `uniform` is empty
  std::string uniform;   // non-empty: the step is this uniform variable
  // As written after the ':' of a linear clause: "2", "-1", "n".
  std::string ToString() const;
  friend bool operator==(const LinearStep& a, const LinearStep& b) {
    return a.uniform == b.uniform &&
           (!a.uniform.empty() || a.constant == b.constant);
  }
  friend bool operator!=(const LinearStep& a, const LinearStep& b) {
    return !(a == b);
  }
};

// One entry of the construct trait set. `name` may be any construct
// (`distribute`, `task`, ... count for positions and for l); `do` is read as
// `for`. The simd fields are the clause values of a `simd` trait.
struct ConstructTrait {
  std::string name;
  int64_t simdlen = 0;                                  // 0: no simdlen clause
  absl::flat_hash_map<std::string, int64_t> aligned;    // variable -> alignment
  absl::flat_hash_map<std::string, LinearStep> linear;  // variable -> step
  NameSet uniform;
  bool inbranch = false;
  bool notinbranch = false;
};

// The device trait set of one device. `arch` may be enriched by the caller
// with architecture aliases; the engine only tests set membership.
struct DeviceTraits {
  NameSet kind;
  NameSet arch;
  NameSet isa;
  NameSet vendor;
  NameSet extension;
};

// Target-device trait sets by device number; -1 is the initial (host)
// device. A `target_device` set without `device_num` uses `default_device`.
struct TargetDevices {
  int64_t default_device = 0;
  absl::flat_hash_map<int64_t, DeviceTraits> devices;
};

// Target devices as Select(), Explain() and MatchSelector() read them,
// without a copy: every device of a node can share one TargetDevices and
// differ only in which of them is the default device. Converts implicitly
// from a TargetDevices (keeping its default); `devices` must outlive it.
struct TargetDevicesView {
  TargetDevicesView();                                    // no target devices
  TargetDevicesView(const TargetDevices& target_devices)  // NOLINT
      : devices(&target_devices.devices),
        default_device(target_devices.default_device) {}
  TargetDevicesView(const TargetDevices& target_devices, int64_t default_device)
      : devices(&target_devices.devices), default_device(default_device) {}

  const absl::flat_hash_map<int64_t, DeviceTraits>* devices;
  int64_t default_device;
};

// The implementation trait set. `requires_` holds requirement names such as
// `unified_shared_memory`; `atomic_default_mem_order` is empty when unset.
struct ImplementationTraits {
  NameSet vendor;
  NameSet extension;
  NameSet requires_;
  std::string atomic_default_mem_order;
};

struct Context {
  // Outermost first. Constructs before the innermost `target` are not part
  // of the construct set (OpenMP 5.1 §2.3.1); Resolve() drops them.
  std::vector<ConstructTrait> construct;
  DeviceTraits device;
  ImplementationTraits implementation;
  TargetDevices target_devices;  // dynamic: used by Select()
  Variables variables;           // dynamic: used by Select()
};

// Appends a construct trait named `name` (no clause values).
void AddConstruct(Context& context, absl::string_view name);

// ---------------------------------------------------------------------------
// Matching and scoring.

// One term of a score: which trait contributed and how much.
struct ScoreTerm {
  std::string trait;  // e.g. "construct.parallel@4", "device.isa", "score(5)"
  uint64_t value = 0;
};

// Whether one selector is compatible with a whole context, and why not.
struct Match {
  bool compatible = false;
  std::string reason;  // first failing trait, e.g. "device.arch: nvptx not in
                       // {amdgcn}"; empty when compatible
  // Sum of the trait values (without the final +1 and without the
  // strict-subset rule, which needs the other candidates).
  uint64_t sum = 0;
  std::vector<ScoreTerm> terms;
};

// Matches `selector` against the whole of `context` (static and dynamic
// parts). A failing expression (overflow, division by zero, unknown
// variable) makes the selector not compatible, with the reason; so does a
// runtime-only condition ("runtime-only condition(foo()): the program
// decides"). The construct set starts at the innermost `target`, as in
// Resolve(). Fails only on contexts over kMaxConstructTraits and on a score
// over 64 bits.
absl::StatusOr<Match> MatchSelector(const Selector& selector,
                                    const Context& context);
// The same with `target_devices` in place of context.target_devices.
absl::StatusOr<Match> MatchSelector(const Selector& selector,
                                    const Context& context,
                                    TargetDevicesView target_devices);

// ---------------------------------------------------------------------------
// Static resolution and per-request selection.

// A variant in declaration order.
struct Candidate {
  std::string name;
  Selector selector;
};

// Which of several candidates with the highest score wins. The OpenMP
// texts give the first for metadirectives and leave declare variant open;
// GCC 12 and clang 14 call the last declared variant (compiler_profile.h).
enum class TieBreak { kFirstDeclared, kLastDeclared };

// The rules a compiler's binaries follow where they depart from the OpenMP
// texts (compiler_profile.h makes them from one table; the defaults are the
// texts). Each names the compilers seen to follow it.
struct ResolveOptions {
  TieBreak ties = TieBreak::kFirstDeclared;
  // GCC 12: `kind(any)` adds to the score and counts for the strict-subset
  // rule like any other kind (the texts: it matches everything and adds
  // nothing).
  bool kind_any_scored = false;
  // GCC 12, clang 14: a selector's constructs take their lowest positions
  // in the context's construct set (the texts: the highest-valued ones).
  bool lowest_embedding = false;
  // GCC 12: a construct at position p of l adds 2^(l-p), positions counted
  // from the innermost (the texts: 2^(p-1)).
  bool positions_from_innermost = false;
  // clang 14: `l` in the weights of kind, arch and isa is the selector's
  // own construct count (the texts: the context's).
  bool l_from_selector = false;
  // clang 14: each `kind` property adds 2^l (the texts: once per selector).
  bool kind_per_property = false;
  // GCC 12: when the best candidate names `simd`, the base function is
  // called (Selection::replaced says which candidate it replaced).
  bool simd_variant_calls_base = false;
  // clang 14: constructs enclosing the innermost `target` stay in the
  // construct set (the texts: it ends at a target construct, OpenMP 5.1
  // §2.3.1, so those are dropped).
  bool keep_constructs_outside_target = false;
  // clang 14, metadirectives: the construct set is empty, whatever
  // encloses the directive.
  bool empty_construct_set = false;
};

// A candidate list shared by the Resolutions made from it (one per static
// context) instead of copied into each.
using CandidateList = std::shared_ptr<const std::vector<Candidate>>;

// The result of the static work for one candidate list and one static
// context. Immutable; cheap to copy; safe to share across threads.
//
// Replacement candidates (static part compatible) are sorted by decreasing
// score; equal scores keep declaration order (the metadirective rule, which
// ctxsel also uses for declare variant), or the reverse with
// TieBreak::kLastDeclared.
class Resolution {
 public:
  struct Entry {
    int index = -1;  // position in the candidate list given to Resolve()
    uint64_t score = 0;
    bool dynamic = false;
  };
  // The sorted replacement candidates.
  absl::Span<const Entry> candidates() const;
  // How many of candidates() form the dynamic prefix: up to and including
  // the first static candidate (all of them when none is static).
  size_t dynamic_prefix_size() const;
  // The candidate list given to Resolve(), in declaration order.
  const std::vector<Candidate>& declared() const;

  const internal::ResolutionData& data() const { return *data_; }
  explicit Resolution(std::shared_ptr<const internal::ResolutionData> data)
      : data_(std::move(data)) {}

 private:
  std::shared_ptr<const internal::ResolutionData> data_;
};

// Does all static work: matches the static parts of every candidate against
// `static_context` (its construct, device and implementation sets; the
// variables and target devices are ignored; the construct set starts at
// the innermost `target` unless `options` say otherwise), scores, applies the
// strict-subset rule, sorts and keeps the dynamic prefix. Fails on contexts
// over kMaxConstructTraits and on a score sum that overflows 64 bits.
// Builds no strings; the Resolution shares `candidates` and
// `static_context` (Explain reads them again for reasons and terms), or a
// copy with the construct set `options` give when that drops constructs.
// Matching compares interned trait ids: each selector's are made when it
// is parsed, a context's on its first Resolve on a thread and kept there
// for the next calls with the same context object, so `static_context`
// must not change once given.
absl::StatusOr<Resolution> Resolve(
    CandidateList candidates, std::shared_ptr<const Context> static_context,
    const ResolveOptions& options = {});
// The same from copies of `candidates` and of the static part of
// `static_context`.
absl::StatusOr<Resolution> Resolve(std::vector<Candidate> candidates,
                                   const Context& static_context,
                                   const ResolveOptions& options = {});

// The outcome of Select().
struct Selection {
  int index = -1;  // declaration index of the chosen candidate; -1: base
  // With ResolveOptions::simd_variant_calls_base: the declaration index of
  // the simd candidate that ranked first and that the compiler replaces by
  // the base function (index is then -1); -1 otherwise.
  int replaced = -1;
  uint64_t score = 0;
  bool dynamic = false;  // the chosen candidate's selector is dynamic
  int evaluated = 0;     // dynamic-prefix entries looked at
  // Declaration indices, in rank order, of the candidates ranked above the
  // choice whose dynamic part holds except for a runtime-only condition:
  // the program itself may pick one of them.
  std::vector<int> runtime_only;
  bool base() const { return index < 0; }
};

// The verdicts of candidates' `condition`s for one request, shared by its
// Select() calls: a candidate's conditions read only the job's variables, so
// they hold on every device class or on none, and a request that asks several
// classes (Resolutions of one candidate list) evaluates each once. Conditions
// that read a device variable (device_variables.h) are the exception: they
// are evaluated in every Select() and never kept. Keyed by
// declaration index; it starts over when asked about another candidate
// list (compared by address: the Resolutions a request asks must stay alive
// until its last Select(), as the Placer's snapshot keeps them). Not
// thread-safe. One per request: every Select() given the same
// ConditionVerdicts must be given the same job variables.
class ConditionVerdicts {
 public:
  ConditionVerdicts() = default;
  ConditionVerdicts(const ConditionVerdicts&) = delete;
  ConditionVerdicts& operator=(const ConditionVerdicts&) = delete;

 private:
  friend Selection Select(const Resolution&, const Variables&,
                          TargetDevicesView, ConditionVerdicts*);
  enum class Verdict : uint8_t { kUnknown, kHold, kFail };
  const std::vector<Candidate>* candidates_ = nullptr;  // the list asked
  absl::InlinedVector<Verdict, 16> verdicts_;           // by declaration index
};

// Walks the dynamic prefix of `resolution` in order and returns the first
// candidate whose dynamic part (non-constant `condition`, `target_device`
// set) holds for `variables` and `target_devices`, or the base function.
// A dynamic part whose expression fails (unknown variable, overflow,
// division by zero) or names an unknown device is not compatible. A
// runtime-only condition (`condition(foo())`, which only the program can
// evaluate) is never true here: such a candidate is skipped and listed in
// Selection::runtime_only. Does not parse or score; allocates only for that
// list (and, with `verdicts`, for more than 16 candidates). With `verdicts`
// (null: none), conditions another Select of the same request evaluated are
// not evaluated again; every Select() given the same `verdicts` must be
// given the same job variables (device variables may differ).
Selection Select(const Resolution& resolution, const Variables& variables,
                 TargetDevicesView target_devices,
                 ConditionVerdicts* verdicts = nullptr);

// ---------------------------------------------------------------------------
// Explain.

struct CandidateReport {
  std::string name;
  std::string selector;     // canonical text
  bool dynamic = false;     // selector is dynamic
  bool compatible = false;  // static and (if evaluated) dynamic part hold
  std::string reason;       // why not compatible, or why a compatible one
                            // was not called (Selection::replaced); empty
                            // otherwise
  uint64_t score = 0;       // final score (0 when not a replacement
                            // candidate or a strict subset of another); a
                            // dynamic candidate whose dynamic part failed
                            // keeps the score it was ranked by
  std::vector<ScoreTerm> terms;
  std::string subset_of;  // name of the candidate it is a strict subset of
  int rank = -1;          // position in the sorted candidate list; -1: none
  bool in_dynamic_prefix = false;
  bool evaluated = false;  // its dynamic part was evaluated by Select()
  bool selected = false;
  // Evaluated and skipped only for a runtime-only condition (reason says
  // which): the program may choose it.
  bool runtime_only = false;
};

struct Explanation {
  Selection selection;
  std::vector<CandidateReport> candidates;  // declaration order
  // A readable multi-line rendering.
  std::string ToText() const;
};

// Reports `selection`, the one Select() made from `resolution`, the same
// `variables` and `target_devices`, on every candidate in declaration order:
// static compatibility and its failing trait, score terms, strict-subset
// demotion, rank, and for the dynamic prefix entries the walk evaluated,
// why they were passed over. Which candidate was selected, which were
// evaluated and which are runtime-only are the Selection's, never decided
// again here, so an explanation cannot disagree with the answer it
// explains; the dynamic verdicts' reasons are only text. Allocates; meant
// for humans.
Explanation Explain(const Resolution& resolution, const Selection& selection,
                    const Variables& variables,
                    TargetDevicesView target_devices);
// Explain(resolution, Select(resolution, variables, target_devices), ...).
Explanation Explain(const Resolution& resolution, const Variables& variables,
                    TargetDevicesView target_devices);

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_SELECTOR_H_
