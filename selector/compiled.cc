#include "selector/compiled.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "selector/scorer.h"
#include "selector/traits.h"

namespace ctxsel::selector::internal {
namespace {

void AddNames(const NameSet& names, TraitField field,
              absl::InlinedVector<uint32_t, 16>& out) {
  for (const std::string& name : names) {
    // A name without an id is required by no selector matched by ids.
    if (const uint32_t id = InternName(name); id != kNoNameId) {
      out.push_back(TraitKey(id, field));
    }
  }
}

// Adds the keys `t` requires; false when ids cannot express it.
bool AddRequired(const TraitSelector& t, TraitField field,
                 StaticRequirements& req) {
  for (const NameProperty& p : t.names) {
    // MatchStatic's rules: kind(any) always holds; a requirement with an
    // argument compares the memory order (not a name).
    if (field == TraitField::kDeviceKind && p.name == "any") continue;
    if (!p.arguments.empty()) return false;
    const uint32_t id = InternName(p.name);
    if (id == kNoNameId) return false;
    req.keys.push_back(TraitKey(id, field));
  }
  return true;
}

bool SimdHasClauses(const SimdProperties& s) {
  return s.simdlen > 0 || !s.aligned.empty() || !s.linear.empty() ||
         !s.uniform.empty() || s.inbranch || s.notinbranch;
}

}  // namespace

namespace {

struct NameTable {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, uint32_t> ids ABSL_GUARDED_BY(mu);
  size_t cap ABSL_GUARDED_BY(mu) = kMaxInternedNames;
};

NameTable& Names() {
  static auto* const table = new NameTable;
  return *table;
}

}  // namespace

uint32_t InternName(absl::string_view name) {
  NameTable& table = Names();
  absl::MutexLock lock(&table.mu);
  auto it = table.ids.find(name);
  if (it != table.ids.end()) return it->second;
  if (table.ids.size() >= table.cap) return kNoNameId;
  const auto id = static_cast<uint32_t>(table.ids.size());
  table.ids.emplace(std::string(name), id);
  return id;
}

void SetInternedNamesCapForTesting(size_t cap) {
  NameTable& table = Names();
  absl::MutexLock lock(&table.mu);
  table.cap = std::max(cap, table.ids.size());
}

TraitField DeviceFieldOf(SelectorId id) {
  switch (id) {
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  case SelectorId::kDevice##Id:                \
  case SelectorId::kTargetDevice##Id:          \
    return TraitField::kDevice##Id;
#include "selector/device_traits.def"
    default:
      return TraitField::kCount;
  }
}

const NameSet& DeviceFieldIn(const DeviceTraits& device, TraitField field) {
  switch (field) {
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  case TraitField::kDevice##Id:                \
    return device.member;
#include "selector/device_traits.def"
    default:
      break;
  }
  static const auto* const kNone = new NameSet;
  return *kNone;
}

size_t InnermostTarget(const Context& context) {
  const std::vector<ConstructTrait>& cs = context.construct;
  for (size_t i = cs.size(); i-- > 1;) {
    if (ResolveAlias(SetId::kConstruct, cs[i].name) == "target") return i;
  }
  return 0;
}

ContextTraits CompileContext(const Context& context) {
  ContextTraits out;
#define DEVICE_TRAIT(member, Id, Name, Weight) \
  AddNames(context.device.member, TraitField::kDevice##Id, out.active);
#include "selector/device_traits.def"
  const ImplementationTraits& impl = context.implementation;
  AddNames(impl.vendor, TraitField::kImplVendor, out.active);
  AddNames(impl.extension, TraitField::kImplExtension, out.active);
  AddNames(impl.requires_, TraitField::kImplRequires, out.active);
  std::sort(out.active.begin(), out.active.end());
  for (const ConstructTrait& c : context.construct) {
    std::optional<SelectorId> id = FindSelector(SetId::kConstruct, c.name);
    out.constructs.push_back(id ? static_cast<int>(*id) : -1);
  }
  out.innermost_target = InnermostTarget(context);
  return out;
}

namespace {

// The contexts ContextTraitsOf keeps per thread. Holding the contexts keeps
// their addresses from being reused, so the address names the object.
struct KeptTraits {
  std::shared_ptr<const Context> context;
  ContextTraits traits;
};
struct TraitsCache {
  std::array<KeptTraits, 4> kept;
  size_t last = 0;
};

// The plain pointer is read without thread_local's init guard; the owner
// frees the cache when the thread ends.
thread_local TraitsCache* traits_cache = nullptr;

// Out of line, so that the hit in ContextTraitsOf needs no stack frame.
ABSL_ATTRIBUTE_NOINLINE const ContextTraits& ContextTraitsMiss(
    const std::shared_ptr<const Context>& context) {
  if (traits_cache == nullptr) {
    thread_local std::unique_ptr<TraitsCache> owner =
        std::make_unique<TraitsCache>();
    traits_cache = owner.get();
  }
  TraitsCache& cache = *traits_cache;
  for (size_t i = 0; i < cache.kept.size(); ++i) {
    if (cache.kept[i].context.get() == context.get()) {
      cache.last = i;
      return cache.kept[i].traits;
    }
  }
  cache.last = (cache.last + 1) % cache.kept.size();
  KeptTraits& k = cache.kept[cache.last];
  k.traits = CompileContext(*context);
  k.context = context;
  return k.traits;
}

}  // namespace

const ContextTraits& ContextTraitsOf(
    const std::shared_ptr<const Context>& context) {
  TraitsCache* cache = traits_cache;
  if (cache != nullptr &&
      cache->kept[cache->last].context.get() == context.get()) {
    return cache->kept[cache->last].traits;
  }
  return ContextTraitsMiss(context);
}

StaticRequirements CompileRequirements(const SelectorAst& ast) {
  StaticRequirements req;
  req.by_ids = true;
  for (const TraitSet& set : ast.sets) {
    for (const TraitSelector& t : set.selectors) {
      switch (set.id) {
        case SetId::kConstruct:
          if (SimdHasClauses(t.simd)) req.by_ids = false;
          req.constructs.push_back(t.id);
          break;
        case SetId::kDevice:
          if (TraitField f = DeviceFieldOf(t.id); f != TraitField::kCount) {
            req.by_ids &= AddRequired(t, f, req);
          }
          break;
        case SetId::kImplementation:
          if (t.id == SelectorId::kImplVendor) {
            req.by_ids &= AddRequired(t, TraitField::kImplVendor, req);
          } else if (t.id == SelectorId::kImplExtension) {
            req.by_ids &= AddRequired(t, TraitField::kImplExtension, req);
          } else if (t.id == SelectorId::kImplRequires) {
            req.by_ids &= AddRequired(t, TraitField::kImplRequires, req);
          }
          break;
        case SetId::kUser:
          for (const Expression& e : t.expressions) {
            if (e.constant() && e.value() == 0) req.never = true;
          }
          break;
        case SetId::kTargetDevice:
          break;  // dynamic
      }
    }
  }
  if (!CountWeights(ast, req)) req.by_ids = false;
  return req;
}

void InternSubsetItems(SubsetItems& items) {
  items.by_ids = true;
  items.item_ids.clear();
  for (const std::string& item : items.items) {
    items.item_ids.push_back(InternName(item));
  }
  std::sort(items.item_ids.begin(), items.item_ids.end());
  items.clause_ids.clear();
  for (const SubsetItems::Construct& c : items.constructs) {
    std::vector<uint32_t>& ids = items.clause_ids.emplace_back();
    for (const std::string& clause : c.clauses) {
      ids.push_back(InternName(clause));
    }
    std::sort(ids.begin(), ids.end());
  }
  auto lacks_id = [](const std::vector<uint32_t>& ids) {
    return !ids.empty() && ids.back() == kNoNameId;  // sorted: last
  };
  if (lacks_id(items.item_ids) ||
      std::any_of(items.clause_ids.begin(), items.clause_ids.end(), lacks_id)) {
    items.by_ids = false;
    items.item_ids.clear();
    items.clause_ids.clear();
  }
}

}  // namespace ctxsel::selector::internal
