// Resolve(), Select() and MatchSelector(): the declare-variant call
// resolution of OpenMP 5.1 §2.3.5, static work first, dynamic per request.
#include "selector/resolver.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "selector/compiled.h"

namespace ctxsel::selector {

using internal::CandidateState;
using internal::ResolutionData;

namespace internal {

absl::Status CheckContextSize(const Context& context) {
  if (context.construct.size() > static_cast<size_t>(kMaxConstructTraits)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "context has ", context.construct.size(), " construct traits; at most ",
        kMaxConstructTraits, " are supported"));
  }
  return absl::OkStatus();
}

size_t ConstructSetStart(size_t size, size_t innermost_target,
                         const ResolveOptions& options) {
  if (options.empty_construct_set) return size;
  if (options.keep_constructs_outside_target) return 0;
  return innermost_target;
}

size_t ConstructSetStart(const Context& context,
                         const ResolveOptions& options) {
  return ConstructSetStart(context.construct.size(), InnermostTarget(context),
                           options);
}

std::shared_ptr<const Context> WithConstructSet(
    std::shared_ptr<const Context> context, size_t start) {
  if (start == 0) return context;
  auto copy = std::make_shared<Context>(*context);
  copy->construct.erase(copy->construct.begin(),
                        copy->construct.begin() + start);
  return copy;
}

bool NamesSimd(const SelectorAst& ast) {
  const TraitSet* construct = ast.FindSet(SetId::kConstruct);
  if (construct == nullptr) return false;
  for (const TraitSelector& t : construct->selectors) {
    if (t.id == SelectorId::kConstructSimd) return true;
  }
  return false;
}

}  // namespace internal

namespace {

// Allocates a Resolution's one block (its ResolutionData and shared count)
// from a block the thread freed last, kept while no other is: a server
// resolves and drops Resolutions one after another, and malloc and free
// were a fifth of a small Resolve. Holds at most one block per thread and
// type, freed when the thread ends; a Resolution freed on the thread after
// that (a thread_local or static destroyed later) goes to the heap.
template <typename T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    Spare& spare = spare_;
    if (n == 1 && spare.block != nullptr) {
      return static_cast<T*>(std::exchange(spare.block, nullptr));
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    Spare& spare = spare_;
    if (n == 1 && spare.block == nullptr && !spare.closed) {
      closer_.Arm();  // so the block is freed when the thread ends
      spare.block = p;
      return;
    }
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const RecyclingAllocator<U>&) const {
    return false;
  }

 private:
  // Trivially destructible, so it stays usable while the thread's other
  // thread_locals are destroyed; the Closer frees its block and closes it.
  struct Spare {
    void* block = nullptr;
    bool closed = false;
  };
  struct Closer {
    void Arm() {}
    ~Closer() {
      Spare& spare = spare_;
      if (spare.block != nullptr) {
        std::allocator<T>().deallocate(static_cast<T*>(spare.block), 1);
        spare.block = nullptr;
      }
      spare.closed = true;
    }
  };
  static thread_local Spare spare_;
  static thread_local Closer closer_;
};
template <typename T>
thread_local
    typename RecyclingAllocator<T>::Spare RecyclingAllocator<T>::spare_;
template <typename T>
thread_local
    typename RecyclingAllocator<T>::Closer RecyclingAllocator<T>::closer_;

// A compatible selector that is a strict subset of another compatible one
// scores 0; the first such superset in declaration order is remembered.
//
// A strict superset of `a` names every item and construct selector `a`
// names, so only the candidates listed under a's rarest item need the full
// test, and those lists are in declaration order, so the first hit is the
// first superset. Selectors that name something of their own (a condition,
// an arch) cost O(own items); the pairwise test ran over every pair, 220 s
// of CPU for 13,000 conditional variants.
//
// Resolve adds each compatible candidate while its selector is still in
// cache; each item (an interned id) and construct maps to one list,
// numbered once, and the lists a candidate is in are kept. Lists hold
// positions among the added candidates (which grow with the declaration
// index). Up to kPairwise candidates (most kernels' resolutions) are
// compared pair by pair, in declaration order, with no index at all.
class StrictSubsetIndex {
 public:
  explicit StrictSubsetIndex(bool kind_any_scored)
      : kind_any_scored_(kind_any_scored) {}

  // Adds the compatible candidate `index`; indices grow.
  void Add(int index, const internal::SelectorAst& ast) {
    // The items Parse stored, or (kind(any) scored) those with kind(any).
    const internal::SubsetItems* items = &ast.subset_items;
    if (kind_any_scored_) {
      own_items_.push_back(std::make_unique<internal::SubsetItems>(
          internal::ItemsOf(ast, /*kind_any_scored=*/true)));
      items = own_items_.back().get();
    }
    // Field by field: an element built whole on the stack and copied as one
    // 16-byte load stalls on store forwarding (as in Resolve and
    // SortCandidates).
    Added& added = added_.emplace_back();
    added.index = index;
    added.items = items;
    // The index is keyed by ids: without them (the interner was full,
    // compiled.h) every pair is compared.
    if (!items->by_ids) {
      unindexed_ = true;
      lists_.reset();
    }
    if (unindexed_) return;
    if (added_.size() == kPairwise + 1) {
      lists_.emplace();
      for (size_t k = 0; k < kPairwise; ++k) lists_->Index(k, *added_[k].items);
    }
    if (lists_) lists_->Index(added_.size() - 1, *items);
  }

  // Demotes every added candidate that is a strict subset of another;
  // false when it demoted none.
  bool Apply(absl::Span<CandidateState> states) {
    const size_t n = added_.size();
    if (n < 2) return false;
    bool demoted = false;
    // Demotes `a` when `b` (positions among the added) is its superset.
    auto demote_if_superset = [&](size_t a, size_t b) {
      if (b == a ||
          !internal::IsStrictSubset(*added_[a].items, *added_[b].items)) {
        return false;
      }
      states[added_[a].index].score = 0;
      states[added_[a].index].subset_of = added_[b].index;
      demoted = true;
      return true;
    };
    if (lists_) lists_->first.push_back(lists_->ids.size());
    for (size_t a = 0; a < n; ++a) {
      // The shortest list `a` is in, or null for all the added.
      const absl::InlinedVector<int, 1>* supersets = nullptr;
      if (lists_) {
        size_t shortest = n;
        for (size_t j = lists_->first[a]; j < lists_->first[a + 1]; ++j) {
          const absl::InlinedVector<int, 1>& list =
              lists_->lists[lists_->ids[j]];
          if (list.size() < shortest) {
            supersets = &list;
            shortest = list.size();
          }
        }
        if (shortest == 1) continue;  // only `a` names that item
      }
      if (supersets != nullptr) {
        for (int b : *supersets) {
          if (demote_if_superset(a, static_cast<size_t>(b))) break;
        }
      } else {
        for (size_t b = 0; b < n; ++b) {
          if (demote_if_superset(a, b)) break;
        }
      }
    }
    return demoted;
  }

 private:
  // Up to this many candidates are compared pair by pair, unindexed.
  static constexpr size_t kPairwise = 8;

  // Which added candidates name each item and construct.
  struct Lists {
    void Index(size_t k, const internal::SubsetItems& items) {
      const int position = static_cast<int>(k);
      first.push_back(ids.size());
      for (uint32_t item : items.item_ids) {
        const int id = ListFor(by_item, item);
        lists[id].push_back(position);
        ids.push_back(id);
      }
      for (const internal::SubsetItems::Construct& c : items.constructs) {
        const int id = ListFor(by_construct, static_cast<int>(c.id));
        absl::InlinedVector<int, 1>& list = lists[id];
        if (list.empty() || list.back() != position) list.push_back(position);
        ids.push_back(id);
      }
    }

    template <typename Map, typename Key>
    int ListFor(Map& map, Key key) {
      auto [it, added] = map.try_emplace(key, static_cast<int>(lists.size()));
      if (added) lists.emplace_back();
      return it->second;
    }

    std::vector<size_t> first;  // where each one's `ids` start
    std::vector<int> ids;       // the lists each one is in
    // Most items name one candidate: a list of one needs no allocation.
    std::vector<absl::InlinedVector<int, 1>> lists;
    absl::flat_hash_map<uint32_t, int> by_item;
    absl::flat_hash_map<int, int> by_construct;
  };

  const bool kind_any_scored_;
  std::vector<std::unique_ptr<internal::SubsetItems>> own_items_;
  struct Added {
    int index;  // declaration index
    const internal::SubsetItems* items;
  };
  absl::InlinedVector<Added, kPairwise> added_;
  std::optional<Lists> lists_;  // past kPairwise candidates
  bool unindexed_ = false;      // a candidate's subset items have no ids
};

// Sorts data.sorted (the compatible candidates in declaration order, with
// their final scores) and fills the ranks and the dynamic prefix.
void SortCandidates(ResolutionData& data) {
  const std::vector<Candidate>& declared = *data.declared;
  // Decreasing score; equal scores in declaration order, or its reverse
  // (the index breaks ties, so std::sort needs no stable_sort's buffer).
  const bool last_first = data.options.ties == TieBreak::kLastDeclared;
  auto before = [last_first](const Resolution::Entry& a,
                             const Resolution::Entry& b) {
    if (a.score != b.score) return a.score > b.score;
    return last_first ? a.index > b.index : a.index < b.index;
  };
  // Many variants of one score are in order already.
  if (!std::is_sorted(data.sorted.begin(), data.sorted.end(), before)) {
    std::sort(data.sorted.begin(), data.sorted.end(), before);
  }
  data.prefix = data.sorted.size();
  for (size_t r = 0; r < data.sorted.size(); ++r) {
    data.states[data.sorted[r].index].rank = static_cast<int>(r);
    if (!data.sorted[r].dynamic && data.prefix == data.sorted.size()) {
      data.prefix = r + 1;
    }
  }
  if (data.prefix > data.prefix_parts.capacity()) {
    data.prefix_parts.reserve(data.prefix);
  }
  for (size_t r = 0; r < data.prefix; ++r) {
    const Resolution::Entry& e = data.sorted[r];
    const internal::SelectorAst& ast = declared[e.index].selector.ast();
    internal::ResolutionData::PrefixPart& part =
        data.prefix_parts.emplace_back();
    part.part = e.dynamic ? &ast.dynamic_part : nullptr;
    part.calls_base =
        data.options.simd_variant_calls_base && internal::NamesSimd(ast);
  }
}

}  // namespace

absl::Span<const Resolution::Entry> Resolution::candidates() const {
  return data_->sorted;
}
size_t Resolution::dynamic_prefix_size() const { return data_->prefix; }
const std::vector<Candidate>& Resolution::declared() const {
  return *data_->declared;
}

absl::StatusOr<Resolution> Resolve(
    CandidateList candidates, std::shared_ptr<const Context> static_context,
    const ResolveOptions& options) {
  const internal::ContextTraits& traits =
      internal::ContextTraitsOf(static_context);
  const size_t start = internal::ConstructSetStart(
      static_context->construct.size(), traits.innermost_target, options);
  if (start != 0) {
    static_context =
        internal::WithConstructSet(std::move(static_context), start);
  }
  const Context& context = *static_context;
  if (context.construct.size() > static_cast<size_t>(kMaxConstructTraits)) {
    return internal::CheckContextSize(context);
  }
  auto data = std::allocate_shared<ResolutionData>(
      RecyclingAllocator<ResolutionData>());
  data->options = options;
  data->declared = std::move(candidates);
  const std::vector<Candidate>& declared = *data->declared;
  data->states.resize(declared.size());
  const int l = static_cast<int>(context.construct.size());
  // Only selectors the ids cannot express read the names.
  // (Not a std::optional, which would zero its 136 bytes on every call.)
  internal::ConstructNames names;
  bool have_names = false;
  StrictSubsetIndex subsets(options.kind_any_scored);
  internal::StaticMatch match;
  for (size_t i = 0; i < declared.size(); ++i) {
    CandidateState& state = data->states[i];
    const internal::SelectorAst& ast = declared[i].selector.ast();
    if (!match.construct_positions.empty()) {
      match.construct_positions.clear();
    }
    const internal::ByIds by_ids = internal::MatchStaticByIds(
        ast, traits, start, options.lowest_embedding, match);
    if (by_ids == internal::ByIds::kIncompatible) continue;
    uint64_t sum = 0;
    if (by_ids == internal::ByIds::kCannot) {
      if (!have_names) {
        names = internal::ConstructNamesOf(context);
        have_names = true;
      }
      match = internal::MatchStatic(ast, context, names,
                                    /*with_reason=*/false,
                                    options.lowest_embedding);
      if (!match.compatible) continue;
    }
    if (by_ids == internal::ByIds::kCannot ||
        !internal::SumScoreByIds(ast.requirements, match.construct_positions, l,
                                 options, &sum)) {
      absl::StatusOr<internal::ScoreSum> slow =
          internal::SumScore(ast, match.construct_positions, l,
                             /*with_terms=*/false, options);
      if (!slow.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "variant '", declared[i].name, "': ", slow.status().message()));
      }
      sum = slow->sum;
    }
    if (sum == UINT64_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variant '", declared[i].name, "': score overflows 64 bits"));
    }
    state.compatible = true;
    state.dynamic = ast.dynamic;
    state.score = sum + 1;
    Resolution::Entry& entry = data->sorted.emplace_back();
    entry.index = static_cast<int>(i);
    entry.score = state.score;
    entry.dynamic = state.dynamic;
    subsets.Add(static_cast<int>(i), ast);
  }
  data->context = std::move(static_context);
  if (subsets.Apply(absl::MakeSpan(data->states))) {
    for (Resolution::Entry& e : data->sorted) {
      e.score = data->states[e.index].score;
    }
  }
  SortCandidates(*data);
  return Resolution(std::move(data));
}

absl::StatusOr<Resolution> Resolve(std::vector<Candidate> candidates,
                                   const Context& static_context,
                                   const ResolveOptions& options) {
  // The whole context less its dynamic parts, so that a static field added
  // to Context is kept without being listed here.
  auto context = std::make_shared<Context>(static_context);
  context->target_devices = {};
  context->variables = {};
  return Resolve(
      std::make_shared<const std::vector<Candidate>>(std::move(candidates)),
      std::move(context), options);
}

TargetDevicesView::TargetDevicesView() : default_device(0) {
  static const auto* const kNone =
      new absl::flat_hash_map<int64_t, DeviceTraits>();
  devices = kNone;
}

Selection Select(const Resolution& resolution, const Variables& variables,
                 TargetDevicesView target_devices,
                 ConditionVerdicts* verdicts) {
  using Verdict = ConditionVerdicts::Verdict;
  const ResolutionData& data = resolution.data();
  if (verdicts != nullptr && verdicts->candidates_ != data.declared.get()) {
    verdicts->candidates_ = data.declared.get();
    verdicts->verdicts_.assign(data.declared->size(), Verdict::kUnknown);
  }
  Selection out;
  for (size_t r = 0; r < data.prefix; ++r) {
    const Resolution::Entry& e = data.sorted[r];
    ++out.evaluated;
    if (e.dynamic) {
      const internal::DynamicPart& part = *data.prefix_parts[r].part;
      bool conditions_hold;
      if (verdicts == nullptr || part.reads_device) {
        conditions_hold = internal::ConditionsHold(part, variables);
      } else {
        Verdict& v = verdicts->verdicts_[e.index];
        if (v == Verdict::kUnknown) {
          v = internal::ConditionsHold(part, variables) ? Verdict::kHold
                                                        : Verdict::kFail;
        }
        conditions_hold = v == Verdict::kHold;
      }
      internal::DynamicMatch m = internal::MatchDynamicPartGiven(
          conditions_hold, part, variables, target_devices);
      if (m == internal::DynamicMatch::kProgramDecides) {
        out.runtime_only.push_back(e.index);
      }
      if (m != internal::DynamicMatch::kHolds) continue;
    }
    if (data.prefix_parts[r].calls_base) {
      out.replaced = e.index;
      return out;
    }
    out.index = e.index;
    out.score = e.score;
    out.dynamic = e.dynamic;
    return out;
  }
  return out;
}

absl::StatusOr<Match> MatchSelector(const Selector& selector,
                                    const Context& context) {
  return MatchSelector(selector, context, context.target_devices);
}

absl::StatusOr<Match> MatchSelector(const Selector& selector,
                                    const Context& context,
                                    TargetDevicesView target_devices) {
  if (internal::ConstructSetStart(context, {}) != 0) {
    Context device_part = context;  // rare: constructs outside a target
    device_part.construct.erase(device_part.construct.begin(),
                                device_part.construct.begin() +
                                    internal::ConstructSetStart(context, {}));
    return MatchSelector(selector, device_part, target_devices);
  }
  CTXSEL_RETURN_IF_ERROR(internal::CheckContextSize(context));
  Match out;
  internal::StaticMatch m = internal::MatchStatic(selector.ast(), context);
  if (!m.compatible) {
    out.reason = std::move(m.reason);
    return out;
  }
  if (internal::MatchDynamic(selector.ast(), context.variables, target_devices,
                             &out.reason) != internal::DynamicMatch::kHolds) {
    return out;
  }
  CTXSEL_ASSIGN_OR_RETURN(
      internal::ScoreSum sum,
      internal::SumScore(selector.ast(), m.construct_positions,
                         static_cast<int>(context.construct.size())));
  out.compatible = true;
  out.sum = sum.sum;
  out.terms = std::move(sum.terms);
  return out;
}

}  // namespace ctxsel::selector
