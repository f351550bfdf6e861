// compiled.h: trait names as interned ids, a selector's static part and a
// context's active traits in that form (LLVM's VariantMatchInfo and
// OMPContext), so that Resolve tests set inclusion instead of walking
// syntax trees and hashing strings.
//
// Internal to the engine. A name is interned once per process, and the
// table only grows: every distinct trait name of the selectors parsed and
// contexts compiled, and every distinct strict-subset item (SubsetItems),
// condition texts included (about 60 bytes each: 2.4 MB for a kernel of
// 40,000 distinct conditions; registering the same texts again adds none).
// Requests add names too (device filters, jobs' implementation traits), so
// the table holds at most kMaxInternedNames; past that a new name has no
// id, and what needs one does without: a selector is matched by its tree
// (StaticRequirements::by_ids false), its subset items compare as strings
// (SubsetItems::by_ids false), and a context leaves the name out, which
// changes no match, as no selector matched by ids requires it.
//
// Example:
//   const ContextTraits& traits = ContextTraitsOf(context);
//   const StaticRequirements& req = ast.requirements;  // set at Parse
//   if (req.by_ids && traits.HasAll(req.keys)) ...
#ifndef CTXSEL_SELECTOR_COMPILED_H_
#define CTXSEL_SELECTOR_COMPILED_H_

#include <algorithm>
#include <cstdint>
#include <memory>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "selector/ast.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {

// At most this many names are interned (see above).
inline constexpr size_t kMaxInternedNames = size_t{1} << 18;
// What InternName gives a new name once the table is full.
inline constexpr uint32_t kNoNameId = UINT32_MAX;

// The id of `name`, the same for equal strings for the process's life;
// kNoNameId when `name` is new and the table is full. Thread-safe.
uint32_t InternName(absl::string_view name);

// Tests: how many names the table may hold from now on (at least as many
// as it holds; kMaxInternedNames restores the bound).
void SetInternedNamesCapForTesting(size_t cap);

// The name sets of a context a static selector reads: the device fields
// (device_traits.def, in order), then the implementation's vendor,
// extension and requires.
enum class TraitField : uint32_t {
#define DEVICE_TRAIT(member, Id, Name, Weight) kDevice##Id,
#include "selector/device_traits.def"
  kImplVendor,
  kImplExtension,
  kImplRequires,
  kCount,
};
// The device field a device or target_device selector reads, or kCount.
TraitField DeviceFieldOf(SelectorId id);
const NameSet& DeviceFieldIn(const DeviceTraits& device, TraitField field);

// `name` in `field`, as one key.
inline uint32_t TraitKey(uint32_t name_id, TraitField field) {
  return name_id * static_cast<uint32_t>(TraitField::kCount) +
         static_cast<uint32_t>(field);
}

// The index of the innermost `target` in the construct set past its first
// entry, or 0: where the texts start the construct set (OpenMP 5.1 §2.3.1).
size_t InnermostTarget(const Context& context);

// The static part of a context as ids, compiled once per context.
struct ContextTraits {
  absl::InlinedVector<uint32_t, 16> active;  // TraitKeys, sorted
  // The construct selector each construct stands for (`do` is `for`), or
  // -1 for an enclosing construct that names none.
  absl::InlinedVector<int, 8> constructs;
  size_t innermost_target = 0;  // InnermostTarget(context)

  bool Has(uint32_t key) const {
    if (active.size() <= 16) {
      for (uint32_t k : active) {
        if (k == key) return true;
      }
      return false;
    }
    return std::binary_search(active.begin(), active.end(), key);
  }
  bool HasAll(absl::Span<const uint32_t> keys) const {
    for (uint32_t k : keys) {
      if (!Has(k)) return false;
    }
    return true;
  }
};
ContextTraits CompileContext(const Context& context);

// CompileContext(*context), kept per thread for the last few context
// objects (which it holds, up to 4 per thread): a context given to Resolve
// must not change. Valid until this thread's next call.
const ContextTraits& ContextTraitsOf(
    const std::shared_ptr<const Context>& context);

// The requirements of `ast` (StaticRequirements in ast.h).
StaticRequirements CompileRequirements(const SelectorAst& ast);

// Fills the interned ids of `items` (SubsetItems in ast.h).
void InternSubsetItems(SubsetItems& items);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_COMPILED_H_
