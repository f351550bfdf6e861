#include "selector/matcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/canonical.h"
#include "selector/compiled.h"
#include "selector/device_variables.h"

namespace ctxsel::selector::internal {
namespace {

bool SimdMatches(const SimdProperties& want, const ConstructTrait& have) {
  if (want.simdlen > 0 &&
      (have.simdlen <= 0 || have.simdlen % want.simdlen != 0)) {
    return false;
  }
  for (const auto& a : want.aligned) {
    auto it = have.aligned.find(a.variable);
    if (it == have.aligned.end()) return false;
    int64_t m = it->second;
    if (a.alignment > 0 && (m <= 0 || a.alignment % m != 0)) return false;
  }
  for (const auto& l : want.linear) {
    auto it = have.linear.find(l.variable);
    if (it == have.linear.end() || it->second != l.step) return false;
  }
  for (const auto& u : want.uniform) {
    if (!have.uniform.contains(u.name)) return false;
  }
  return (!want.inbranch || have.inbranch) &&
         (!want.notinbranch || have.notinbranch);
}

bool ConstructMatches(const TraitSelector& t, const ConstructTrait& c,
                      absl::string_view context_name) {
  if (GetSelectorInfo(t.id).name != context_name) return false;
  return t.id != SelectorId::kConstructSimd || SimdMatches(t.simd, c);
}

std::string ConstructListText(const std::vector<ConstructTrait>& cs) {
  std::vector<std::string> names;
  for (const ConstructTrait& c : cs) names.push_back(c.name);
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

bool EmbedConstructs(const TraitSet& set, const std::vector<ConstructTrait>& cs,
                     const ConstructNames& names, bool with_reason, bool lowest,
                     StaticMatch& out) {
  const std::vector<TraitSelector>& sel = set.selectors;
  const size_t failed = Embed(
      sel.size(), cs.size(),
      [&](size_t i, size_t j) {
        return ConstructMatches(sel[i], cs[j], names[j]);
      },
      lowest, out.construct_positions);
  if (failed == sel.size()) return true;
  if (with_reason) {
    const size_t i = failed;
    out.reason = absl::StrCat(
        "construct.", SelectorText(sel[i]), ": not active",
        i > 0 ? absl::StrCat(" after ", SelectorText(sel[i - 1])) : "",
        " in the context's construct set ", ConstructListText(cs));
  }
  return false;
}

const NameSet* DeviceField(const DeviceTraits& d, SelectorId id) {
  const TraitField field = DeviceFieldOf(id);
  return field == TraitField::kCount ? nullptr : &DeviceFieldIn(d, field);
}

std::string Qualified(const TraitSelector& t) {
  const SelectorInfo& info = GetSelectorInfo(t.id);
  return absl::StrCat(GetSetInfo(info.set).name, ".", info.name);
}

// Every name must be in `have` (`any` always is).
bool NamesActive(const TraitSelector& t, const NameSet& have,
                 std::string* reason) {
  for (const NameProperty& p : t.names) {
    if (p.name == "any" && (t.id == SelectorId::kDeviceKind ||
                            t.id == SelectorId::kTargetDeviceKind)) {
      continue;
    }
    if (!have.contains(p.name)) {
      if (reason) {
        *reason =
            absl::StrCat(Qualified(t), ": ", NameText(p.name, p.extension),
                         " not in ", SetText(have));
      }
      return false;
    }
  }
  return true;
}

bool DeviceActive(const TraitSet& set, const DeviceTraits& d,
                  std::string* reason) {
  for (const TraitSelector& t : set.selectors) {
    const NameSet* have = DeviceField(d, t.id);
    if (have && !NamesActive(t, *have, reason)) return false;
  }
  return true;
}

// Requirements are names in the context's requires set, but
// atomic_default_mem_order(x) must equal the context's memory order.
bool RequiresActive(const TraitSelector& t, const ImplementationTraits& impl,
                    std::string* reason) {
  for (const NameProperty& p : t.names) {
    if (!p.arguments.empty()) {
      if (p.arguments[0].name == impl.atomic_default_mem_order) continue;
      if (reason) {
        *reason = absl::StrCat("implementation.requires: ", PropertyText(p),
                               " but the context has '",
                               impl.atomic_default_mem_order, "'");
      }
      return false;
    }
    if (!impl.requires_.contains(p.name)) {
      if (reason) {
        *reason = absl::StrCat("implementation.requires: ", p.name, " not in ",
                               SetText(impl.requires_));
      }
      return false;
    }
  }
  return true;
}

bool ImplementationActive(const TraitSet& set, const ImplementationTraits& impl,
                          std::string* reason) {
  for (const TraitSelector& t : set.selectors) {
    bool active = true;
    switch (t.id) {
      case SelectorId::kImplVendor:
        active = NamesActive(t, impl.vendor, reason);
        break;
      case SelectorId::kImplExtension:
        active = NamesActive(t, impl.extension, reason);
        break;
      case SelectorId::kImplRequires:
        active = RequiresActive(t, impl, reason);
        break;
      default:
        break;
    }
    if (!active) return false;
  }
  return true;
}

// Evaluates a condition; `constant_only` selects which conditions to look at.
// Runtime-only conditions are skipped; the first is kept in `runtime_only`.
bool ConditionsHold(const TraitSet& set, const Variables& vars,
                    bool constant_only, std::string* reason,
                    const Expression** runtime_only) {
  for (const TraitSelector& t : set.selectors) {
    for (const Expression& e : t.expressions) {
      if (e.constant() != constant_only) continue;
      if (e.runtime_only()) {
        if (*runtime_only == nullptr) *runtime_only = &e;
        continue;
      }
      EvalResult r = e.Evaluate(vars);
      if (r.ok() && r.value != 0) continue;
      if (reason) {
        *reason = absl::StrCat("user.condition(", e.text(),
                               "): ", r.ok() ? "false" : DescribeEvalError(r));
      }
      return false;
    }
  }
  return true;
}

bool TargetDeviceActive(const TraitSet& set, const Variables& vars,
                        TargetDevicesView devices, std::string* reason) {
  int64_t number = devices.default_device;
  for (const TraitSelector& t : set.selectors) {
    if (t.id != SelectorId::kTargetDeviceNum) continue;
    EvalResult r = t.expressions[0].Evaluate(vars);
    if (!r.ok()) {
      if (reason) {
        *reason =
            absl::StrCat("target_device.device_num(", t.expressions[0].text(),
                         "): ", DescribeEvalError(r));
      }
      return false;
    }
    number = r.value;
  }
  auto it = devices.devices->find(number);
  if (it == devices.devices->end()) {
    if (reason) {
      *reason =
          absl::StrCat("target_device: no device ", number, " in the context");
    }
    return false;
  }
  return DeviceActive(set, it->second, reason);
}

}  // namespace

std::string SetText(const NameSet& names) {
  std::vector<std::string> sorted(names.begin(), names.end());
  std::sort(sorted.begin(), sorted.end());
  return absl::StrCat("{", absl::StrJoin(sorted, ", "), "}");
}

ConstructNames ConstructNamesOf(const Context& context) {
  ConstructNames names;
  for (const ConstructTrait& c : context.construct) {
    names.push_back(ResolveAlias(SetId::kConstruct, c.name));
  }
  return names;
}

StaticMatch MatchStatic(const SelectorAst& ast, const Context& context,
                        const ConstructNames& construct_names, bool with_reason,
                        bool lowest_embedding) {
  StaticMatch out;
  static const Variables kNoVariables;
  std::string* reason = with_reason ? &out.reason : nullptr;
  for (const TraitSet& set : ast.sets) {
    bool ok = true;
    switch (set.id) {
      case SetId::kConstruct:
        ok = EmbedConstructs(set, context.construct, construct_names,
                             with_reason, lowest_embedding, out);
        break;
      case SetId::kDevice:
        ok = DeviceActive(set, context.device, reason);
        break;
      case SetId::kImplementation:
        ok = ImplementationActive(set, context.implementation, reason);
        break;
      case SetId::kUser: {
        const Expression* runtime_only = nullptr;  // never constant
        ok = ConditionsHold(set, kNoVariables, true, reason, &runtime_only);
        break;
      }
      case SetId::kTargetDevice:
        break;
    }
    if (!ok) return out;
  }
  out.compatible = true;
  return out;
}

DynamicMatch MatchDynamic(const SelectorAst& ast, const Variables& variables,
                          TargetDevicesView devices, std::string* reason) {
  const Expression* runtime_only = nullptr;
  for (const TraitSet& set : ast.sets) {
    if (set.id == SetId::kUser &&
        !ConditionsHold(set, variables, false, reason, &runtime_only)) {
      return DynamicMatch::kFails;
    }
    if (set.id == SetId::kTargetDevice &&
        !TargetDeviceActive(set, variables, devices, reason)) {
      return DynamicMatch::kFails;
    }
  }
  if (runtime_only == nullptr) return DynamicMatch::kHolds;
  if (reason) {
    *reason = absl::StrCat(
        "runtime-only condition(", runtime_only->text(),
        "): ", DescribeEvalError(runtime_only->Evaluate(variables)));
  }
  return DynamicMatch::kProgramDecides;
}

DynamicPart DynamicPartOf(const SelectorAst& ast) {
  DynamicPart part;
  for (const TraitSet& set : ast.sets) {
    if (set.id == SetId::kTargetDevice) part.target_device = &set;
    if (set.id != SetId::kUser) continue;
    for (const TraitSelector& t : set.selectors) {
      for (const Expression& e : t.expressions) {
        if (e.constant()) continue;
        if (e.runtime_only()) {
          part.runtime_only = true;
        } else {
          if (e.ReadsVariable(IsDeviceVariable)) part.reads_device = true;
          part.conditions.push_back(&e);
        }
      }
    }
  }
  return part;
}

bool ConditionsHold(const DynamicPart& part, const Variables& variables) {
  for (const Expression* e : part.conditions) {
    EvalResult r = e->Evaluate(variables);
    if (!r.ok() || r.value == 0) return false;
  }
  return true;
}

DynamicMatch MatchDynamicPart(const DynamicPart& part,
                              const Variables& variables,
                              TargetDevicesView devices) {
  return MatchDynamicPartGiven(ConditionsHold(part, variables), part, variables,
                               devices);
}

DynamicMatch MatchDynamicPartGiven(bool conditions_hold,
                                   const DynamicPart& part,
                                   const Variables& variables,
                                   TargetDevicesView devices) {
  if (!conditions_hold) return DynamicMatch::kFails;
  if (part.target_device != nullptr &&
      !TargetDeviceActive(*part.target_device, variables, devices, nullptr)) {
    return DynamicMatch::kFails;
  }
  return part.runtime_only ? DynamicMatch::kProgramDecides
                           : DynamicMatch::kHolds;
}

}  // namespace ctxsel::selector::internal
