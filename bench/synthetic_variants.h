// The synthetic kernel variants that every benchmark and the load tool
// register, so that their figures describe one workload.
#ifndef CTXSEL_BENCH_SYNTHETIC_VARIANTS_H_
#define CTXSEL_BENCH_SYNTHETIC_VARIANTS_H_

#include <string>

namespace ctxsel::bench {

// The selector of variant `v` of a synthetic kernel. Six shapes repeat:
// GPU and CPU variants, static ones and dynamic ones whose condition on the
// job variable N depends on `v`, so that a kernel's candidates mix like a
// real library's (a dynamic prefix before the first static candidate).
std::string VariantSelector(int v);

}  // namespace ctxsel::bench

#endif  // CTXSEL_BENCH_SYNTHETIC_VARIANTS_H_
