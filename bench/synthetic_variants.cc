#include "bench/synthetic_variants.h"

#include "absl/strings/str_cat.h"

namespace ctxsel::bench {

std::string VariantSelector(int v) {
  switch (v % 6) {
    case 0:
      return absl::StrCat(
          "device={kind(gpu), arch(nvptx)}, "
          "user={condition(N > ",
          v * 512, ")}");
    case 1:
      return "construct={target, teams, parallel, for}, "
             "device={arch(nvptx, sm_90)}";
    case 2:
      return absl::StrCat(
          "device={arch(amdgcn), isa(gfx90a)}, "
          "user={condition(N >= ",
          v * 256, ")}");
    case 3:
      return "construct={parallel, for}, device={kind(gpu), arch(amdgcn)}";
    case 4:
      return absl::StrCat(
          "device={kind(cpu), isa(avx512f)}, implementation={vendor(llvm)}, "
          "user={condition(score(",
          v, "): N < 100000)}");
    default:
      return absl::StrCat(
          "construct={for}, device={kind(cpu)}, "
          "user={condition(N % ",
          v + 2, " == 0)}");
  }
}

}  // namespace ctxsel::bench
