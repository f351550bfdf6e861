// symbol_name.h: deterministic symbol names for `begin declare variant`
// function definitions.
//
// OpenMP 5.1 §2.3.5: the symbol name of a definition between `begin declare
// variant` and `end declare variant` is its name augmented with a string
// determined by the effective context selector, and two definitions get
// equal symbol names if and only if their effective selectors are
// equivalent. ctxsel appends "$ompvariant$" and an injective encoding of the
// selector's canonical text (Selector::ToString(), equal iff equivalent):
// letters and digits stay, `_` becomes `__`, every other byte `_XX` (hex).
//
// Example:
//
//   VariantSymbolName("my_fun", *Selector::Parse("device={kind(gpu)}"))
//   // "my_fun$ompvariant$device_3D_7Bkind_28gpu_29_7D" (the encoded part
//   // follows the canonical text, whatever its spacing)
#ifndef CTXSEL_SELECTOR_PRAGMA_SYMBOL_NAME_H_
#define CTXSEL_SELECTOR_PRAGMA_SYMBOL_NAME_H_

#include <string>

#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::pragma {

// `base` (with `::` kept) + "$ompvariant$" + the encoded canonical selector.
std::string VariantSymbolName(absl::string_view base,
                              const selector::Selector& effective);

// The encoding used above: injective, and its output holds only [A-Za-z0-9_].
std::string EncodeSymbolPart(absl::string_view text);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_SYMBOL_NAME_H_
