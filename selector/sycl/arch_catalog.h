// arch_catalog.h: the SYCL device-architecture catalog.
//
// SYCL users name devices by architecture (`nvidia_gpu_sm_90`,
// `amd_gpu_gfx90a`, `intel_gpu_pvc`, alias `intel_gpu_12_0_0`, `x86_64`).
// This catalog, generated from the one table in arch_catalog.def, maps every
// such name to its canonical name, its aliases, its `__SYCL_TARGET_*__` macro
// and its meaning as OpenMP device traits (kind, arch, isa, vendor).
//
// Agents call DeviceTraitsFor() on a device's SYCL architecture; the result's
// `arch` set also holds the SYCL names of the device, so a selector such as
// `device={arch(nvidia_gpu_sm_90)}` or `device={arch(intel_gpu_12_0_0)}`
// matches by plain set membership in the selector engine (and scores as any
// other `arch` trait).
//
// Example:
//
//   absl::StatusOr<ctxsel::selector::DeviceTraits> traits =
//       ctxsel::sycl::DeviceTraitsFor("intel_gpu_12_0_0");
//   // traits->kind == {gpu, nohost}, traits->vendor == {intel},
//   // traits->isa == {tgllp},
//   // traits->arch == {spir64, intel_gpu, intel_gpu_tgllp, intel_gpu_12_0_0}
//
//   absl::StatusOr<const ctxsel::sycl::ArchInfo*> a =
//       ctxsel::sycl::LookupArch("nvidia_gpu_sm_91");
//   // NotFoundError: "unknown SYCL architecture 'nvidia_gpu_sm_91'; nearest:
//   //   nvidia_gpu_sm_90, ..."
#ifndef CTXSEL_SELECTOR_SYCL_ARCH_CATALOG_H_
#define CTXSEL_SELECTOR_SYCL_ARCH_CATALOG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::sycl {

// One identifier per catalog row, in table order.
enum class ArchId {
#define SYCL_ARCH(Id, Family, Name, Isa, Macro) Id,
#include "selector/sycl/arch_catalog.def"
};

// One catalog row with its family's traits filled in.
struct ArchInfo {
  ArchId id;
  absl::string_view name;    // canonical -fsycl-targets name
  absl::string_view isa;     // OpenMP `isa` property; empty for x86_64
  absl::string_view macro;   // e.g. "__SYCL_TARGET_NVIDIA_GPU_SM_90__"
  absl::string_view vendor;  // OpenMP `vendor`; empty for x86_64
  std::vector<absl::string_view> kinds;  // OpenMP `kind` properties
  std::vector<absl::string_view> archs;  // family `arch` properties (nvptx)
  std::vector<absl::string_view> aliases;
  // The architecture whose devices run code for this one: `id` itself except
  // for code targets such as nvidia_gpu_sm_90a (runs on nvidia_gpu_sm_90).
  ArchId device;
};

// Every architecture, in table order.
const std::vector<ArchInfo>& AllArchs();
const ArchInfo& GetArch(ArchId id);

// Finds an architecture by canonical name, alias or macro name (exact,
// case-sensitive). Returns nullptr when there is none.
const ArchInfo* FindArch(absl::string_view name);

// Like FindArch(), but an unknown name is a NotFoundError whose message names
// it and lists the nearest valid names.
absl::StatusOr<const ArchInfo*> LookupArch(absl::string_view name);

// The `max_count` valid names (canonical names and aliases) nearest to `name`:
// names that contain `name` first ("gfx90a" -> "amd_gpu_gfx90a"), then by
// edit distance (ignoring case; a digit replaced by a letter costs more
// than by a digit), nearest first; ties go to the longer common prefix, then
// to table order.
std::vector<std::string> NearestArchNames(absl::string_view name,
                                          size_t max_count = 3);

// True when devices of architecture `a` are devices of architecture `b`
// (same device row; sm_90 and sm_90a are the same devices).
bool SameDevices(const ArchInfo& a, const ArchInfo& b);

// Every canonical name and alias that describes the devices of `arch`,
// in table order (for sm_90: nvidia_gpu_sm_90, nvidia_gpu_sm_90a).
std::vector<absl::string_view> DeviceArchNames(const ArchInfo& arch);

// The OpenMP device traits of a device whose SYCL architecture is `name`
// (canonical, alias or macro): the family's kinds, arch properties and
// vendor, plus every name from DeviceArchNames() in `arch` and the isa of
// every row for the same devices in `isa`. `extension` is left empty.
// Unknown names are LookupArch()'s NotFoundError.
absl::StatusOr<selector::DeviceTraits> DeviceTraitsFor(absl::string_view name);

}  // namespace ctxsel::sycl

#endif  // CTXSEL_SELECTOR_SYCL_ARCH_CATALOG_H_
