// arch_chain.h: `if_architecture_is` chains, the SYCL way to pick a variant
// by device architecture.
//
// A chain is an ordered list of clauses, written like the SYCL
// device_architecture extension's calls:
//
//   if_architecture_is(intel_gpu_pvc, nvidia_gpu_sm_90): v1;
//   else_if_architecture_is(amd_gpu_gfx90a): v2;
//   otherwise: v3
//
// The first clause whose architecture list contains the device's
// architecture wins; `otherwise` (optional, last) catches every other
// device. Names are catalog names or aliases (arch_catalog.h); unknown names
// are errors listing the nearest valid names. Unlike context selectors there
// is no scoring: order alone decides.
//
// Example:
//
//   absl::StatusOr<ArchChain> chain = ArchChain::Parse(
//       "if_architecture_is(intel_gpu_12_0_0): tgl; otherwise: generic");
//   chain->Select(*FindArch("intel_gpu_tgllp"));  // "tgl"
//   chain->Select(*FindArch("amd_gpu_gfx90a"));   // "generic"
#ifndef CTXSEL_SELECTOR_SYCL_ARCH_CHAIN_H_
#define CTXSEL_SELECTOR_SYCL_ARCH_CHAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/sycl/arch_catalog.h"

namespace ctxsel::sycl {

// One `if_architecture_is` / `else_if_architecture_is` clause.
struct ArchClause {
  std::vector<ArchId> archs;  // as written (aliases resolved), at least one
  std::string variant;
};

class ArchChain {
 public:
  // Parses a chain. Clauses are separated by `;` (a trailing `;` is
  // allowed); the first is `if_architecture_is`, later ones
  // `else_if_architecture_is`, and `otherwise` may only come last. A variant
  // is a C/C++ name (`ns::f` allowed). Errors are InvalidArgumentError
  // "L:C: what is wrong" with 1-based line and column.
  static absl::StatusOr<ArchChain> Parse(absl::string_view text);

  // The variant chosen for a device of architecture `device`: the first
  // clause naming an architecture with the same devices (SameDevices()), else
  // the `otherwise` variant, else nullopt.
  std::optional<std::string> Select(const ArchInfo& device) const;

  // Select() for a device named by catalog name, alias or macro; unknown
  // names are LookupArch()'s NotFoundError.
  absl::StatusOr<std::optional<std::string>> Select(
      absl::string_view device) const;

  // Canonical text: canonical names, one space after `,`, `: ` and `; `.
  std::string ToString() const;

  const std::vector<ArchClause>& clauses() const { return clauses_; }
  const std::optional<std::string>& otherwise() const { return otherwise_; }

 private:
  std::vector<ArchClause> clauses_;
  std::optional<std::string> otherwise_;
};

}  // namespace ctxsel::sycl

#endif  // CTXSEL_SELECTOR_SYCL_ARCH_CHAIN_H_
