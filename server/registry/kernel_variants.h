// kernel_variants.h: the one check of a kernel's variant list.
//
// The registry makes it before it stores a change, placement
// (KernelEntry::Make) when it takes a list: the same function, so the
// registry never acknowledges a list that placement then refuses (which
// left placement on the old list while the RPC reported success).
//
//   // Appending `added` to the variants `kernel` keeps:
//   absl::Status s = CheckKernelVariants("saxpy", kept, added);
//   // AlreadyExistsError "variants[0] (saxpy_nv).name: kernel saxpy
//   // already has a variant of that name"
#ifndef CTXSEL_SERVER_REGISTRY_KERNEL_VARIANTS_H_
#define CTXSEL_SERVER_REGISTRY_KERNEL_VARIANTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/model/model.h"

namespace ctxsel::server {

// The most variants one kernel may have. Resolution is O(variants) per
// device class and job signature (selector/resolver.h: 40,000 conditional
// variants resolve in 13-23 ms), so the cap bounds what one registration
// can make every later Select of the kernel pay.
inline constexpr int kMaxVariantsPerKernel = 50000;

// Checks that `kept` (the variants of `kernel` that stay; checked before)
// and `added` (named "variants[i]" in errors, by their position) can be the
// variants of `kernel` together:
//   InvalidArgumentError  the kernel name breaks the rule for names
//                         (names.h); a variant of another kernel; a name
//                         repeated within `added` (with a field violation);
//   AlreadyExistsError    a name of `added` that `kept` has (VARIANT_EXISTS,
//                         with the variant as ResourceInfo);
//   InvalidArgumentError  more than kMaxVariantsPerKernel together
//                         (TOO_MANY_VARIANTS, field "variants"); an image
//                         id that images::ParseImageId refuses, or more
//                         than kMaxImages (model.h) (field violation).
// Names and selectors of single variants are VariantFromSpec's to check
// (variant_registry.h).
absl::Status CheckKernelVariants(const std::string& kernel,
                                 absl::Span<const Variant> kept,
                                 absl::Span<const Variant> added);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_REGISTRY_KERNEL_VARIANTS_H_
