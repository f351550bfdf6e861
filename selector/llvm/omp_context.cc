// Compiled with -fno-rtti, as Debian's libLLVM is: this file subclasses
// llvm::omp::OMPContext.
#include "selector/llvm/omp_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Frontend/OpenMP/OMPContext.h"
#include "selector/ast.h"
#include "selector/traits.h"

namespace ctxsel::selector::llvm_omp {
namespace {

using internal::SelectorAst;
using internal::SelectorId;
using internal::SetId;
using internal::TraitSelector;
using internal::TraitSet;
namespace omp = ::llvm::omp;

// The engine's context; LLVM asks it about ISA names it does not model.
struct Context final : omp::OMPContext {
  Context() : omp::OMPContext(false, llvm::Triple()) {
    // Start from nothing: the triple's defaults are not the document's.
    ActiveTraits.reset();
    ConstructTraits.clear();
    addTrait(omp::TraitProperty::device_kind_any);
    addTrait(omp::TraitProperty::user_condition_true);
  }
  bool matchesISATrait(llvm::StringRef isa) const override {
    return isa_->contains(std::string(isa));
  }
  const NameSet* isa_ = nullptr;
};

class Document final : public LlvmDocument {
 public:
  int BestVariant() const override {
    return omp::getBestVariantMatchForContext(variants_, context_);
  }
  Context context_;
  llvm::SmallVector<omp::VariantMatchInfo, 8> variants_;
};

// The property LLVM names `name` by in `set`'s selector `selector`, or
// invalid.
omp::TraitProperty Property(omp::TraitSet set, omp::TraitSelector selector,
                            const std::string& name) {
  return omp::getOpenMPContextTraitPropertyKind(set, selector, name);
}

// The construct property of `name`, an engine alias (`do`) read as the
// selector it stands for, or invalid.
omp::TraitProperty ConstructProperty(absl::string_view name) {
  name = internal::ResolveAlias(SetId::kConstruct, name);
  omp::TraitSelector s = omp::getOpenMPContextTraitSelectorKind(
      llvm::StringRef(name.data(), name.size()));
  if (s == omp::TraitSelector::invalid ||
      omp::getOpenMPContextTraitSetForSelector(s) != omp::TraitSet::construct) {
    return omp::TraitProperty::invalid;
  }
  return omp::getOpenMPContextTraitPropertyForSelector(s);
}

bool HasSimdClauses(const ConstructTrait& c) {
  return c.simdlen != 0 || !c.aligned.empty() || !c.linear.empty() ||
         !c.uniform.empty() || c.inbranch || c.notinbranch;
}

// Adds the names of a device or implementation selector `t` that LLVM
// models as `set`'s `selector`; false naming the first it lacks.
template <typename Fail>
bool AddNamedProperties(const TraitSelector& t, omp::TraitSet set,
                        omp::TraitSelector selector, llvm::APInt* score,
                        omp::VariantMatchInfo& vmi, const Fail& fail) {
  for (const internal::NameProperty& n : t.names) {
    omp::TraitProperty p = Property(set, selector, n.name);
    if (p == omp::TraitProperty::invalid || n.extension) {
      return fail(absl::StrCat("(", n.name, ")"));
    }
    vmi.addTrait(set, p, n.name, score);
  }
  return true;
}

// Adds the context's names of one device or implementation selector.
void AddNames(Context& ctx, omp::TraitSet set, omp::TraitSelector selector,
              const NameSet& names) {
  for (const std::string& n : names) {
    omp::TraitProperty p = Property(set, selector, n);
    if (p != omp::TraitProperty::invalid) ctx.addTrait(set, p);
  }
}

bool ReadContext(const selector::Context& in, Context& ctx,
                 std::string* why_not) {
  for (const ConstructTrait& c : in.construct) {
    omp::TraitProperty p = ConstructProperty(c.name);
    if (p == omp::TraitProperty::invalid || HasSimdClauses(c)) {
      *why_not = absl::StrCat("context construct ", c.name);
      return false;
    }
    ctx.addTrait(omp::TraitSet::construct, p);
  }
  AddNames(ctx, omp::TraitSet::device, omp::TraitSelector::device_kind,
           in.device.kind);
  AddNames(ctx, omp::TraitSet::device, omp::TraitSelector::device_arch,
           in.device.arch);
  ctx.isa_ = &in.device.isa;
  AddNames(ctx, omp::TraitSet::implementation,
           omp::TraitSelector::implementation_vendor, in.implementation.vendor);
  for (const std::string& r : in.implementation.requires_) {
    omp::TraitSelector s = omp::getOpenMPContextTraitSelectorKind(r);
    if (s == omp::TraitSelector::invalid) continue;
    ctx.addTrait(omp::TraitSet::implementation,
                 omp::getOpenMPContextTraitPropertyForSelector(s));
  }
  return true;
}

// Adds one selector's properties to `vmi`; false when LLVM lacks one.
bool AddSelector(const TraitSelector& t, omp::VariantMatchInfo& vmi,
                 std::string* why_not) {
  const internal::SelectorInfo& info = internal::GetSelectorInfo(t.id);
  llvm::APInt score(64, static_cast<uint64_t>(t.score));
  llvm::APInt* score_ptr = t.has_score ? &score : nullptr;
  auto fail = [&](absl::string_view what) {
    *why_not =
        absl::StrCat(internal::GetSetInfo(info.set).name, ".", info.name, what);
    return false;
  };
  switch (t.id) {
    case SelectorId::kConstructTarget:
    case SelectorId::kConstructTeams:
    case SelectorId::kConstructParallel:
    case SelectorId::kConstructFor:
    case SelectorId::kConstructDispatch:
    case SelectorId::kConstructSimd: {
      if (!t.simd.clauses.empty()) return fail(" with clauses");
      vmi.addTrait(omp::TraitSet::construct, ConstructProperty(info.name),
                   llvm::StringRef(info.name.data(), info.name.size()));
      return true;
    }
    case SelectorId::kDeviceKind:
      return AddNamedProperties(t, omp::TraitSet::device,
                                omp::TraitSelector::device_kind, score_ptr, vmi,
                                fail);
    case SelectorId::kDeviceArch:
      return AddNamedProperties(t, omp::TraitSet::device,
                                omp::TraitSelector::device_arch, score_ptr, vmi,
                                fail);
    case SelectorId::kDeviceIsa:
      for (const internal::NameProperty& n : t.names) {
        if (n.extension) return fail(absl::StrCat("(", n.name, ")"));
        vmi.addTrait(omp::TraitSet::device,
                     omp::TraitProperty::device_isa___ANY, n.name, score_ptr);
      }
      return true;
    case SelectorId::kImplVendor:
      return AddNamedProperties(t, omp::TraitSet::implementation,
                                omp::TraitSelector::implementation_vendor,
                                score_ptr, vmi, fail);
    case SelectorId::kImplRequires:
      for (const internal::NameProperty& n : t.names) {
        omp::TraitSelector s = omp::getOpenMPContextTraitSelectorKind(n.name);
        if (s == omp::TraitSelector::invalid || !n.arguments.empty()) {
          return fail(absl::StrCat("(", n.name, ")"));
        }
        vmi.addTrait(omp::TraitSet::implementation,
                     omp::getOpenMPContextTraitPropertyForSelector(s), n.name,
                     score_ptr);
      }
      return true;
    case SelectorId::kUserCondition:
      for (const internal::Expression& e : t.expressions) {
        if (!e.constant()) return fail(" not constant");
        vmi.addTrait(omp::TraitSet::user,
                     e.value() != 0 ? omp::TraitProperty::user_condition_true
                                    : omp::TraitProperty::user_condition_false,
                     e.text(), score_ptr);
      }
      return true;
    default:  // device vendor and extension, implementation extension,
              // target_device: LLVM 14 has no such traits
      return fail("");
  }
}

}  // namespace

std::unique_ptr<LlvmDocument> ToLlvm(const selector::Context& context,
                                     const std::vector<Candidate>& candidates,
                                     std::string* why_not) {
  auto doc = std::make_unique<Document>();
  if (!ReadContext(context, doc->context_, why_not)) return nullptr;
  for (const Candidate& c : candidates) {
    omp::VariantMatchInfo vmi;
    for (const TraitSet& set : c.selector.ast().sets) {
      if (set.id == SetId::kTargetDevice) {
        *why_not = "target_device";
        return nullptr;
      }
      for (const TraitSelector& t : set.selectors) {
        if (!AddSelector(t, vmi, why_not)) return nullptr;
      }
    }
    doc->variants_.push_back(std::move(vmi));
  }
  return doc;
}

}  // namespace ctxsel::selector::llvm_omp
