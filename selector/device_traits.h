// device_traits.h: the traits of one device (device_traits.def) as fields
// of DeviceTraits, in vocabulary order, for code that handles every trait
// the same way (reports, listings, printing).
//
//   for (const DeviceTraitField& f : kDeviceTraitFields) {
//     Print(f.name, traits.*f.member);  // "kind", {"gpu", "nohost"}
//   }
//
// Code with a struct of its own whose members are named as the traits
// (ctxsel::DeviceInfo, ctxsel.v1.DeviceTraits) reads device_traits.def
// directly with DEVICE_TRAIT(member, Id, Name, Weight).
#ifndef CTXSEL_SELECTOR_DEVICE_TRAITS_H_
#define CTXSEL_SELECTOR_DEVICE_TRAITS_H_

#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::selector {

struct DeviceTraitField {
  absl::string_view name;  // "kind", "arch", ...
  NameSet DeviceTraits::*member;
};

inline constexpr DeviceTraitField kDeviceTraitFields[] = {
#define DEVICE_TRAIT(member, Id, Name, Weight) {Name, &DeviceTraits::member},
#include "selector/device_traits.def"
};

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_DEVICE_TRAITS_H_
