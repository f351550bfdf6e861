// Variants of one kernel, declared the way OpenMP programs declare them.
// tools/demo.sh registers them straight from this file.
#include <stddef.h>

void saxpy_sm90(size_t n, float a, const float *x, float *y);
void saxpy_gfx90a(size_t n, float a, const float *x, float *y);
void saxpy_pvc(size_t n, float a, const float *x, float *y);
void saxpy_avx512(size_t n, float a, const float *x, float *y);
void saxpy_gpu_small(size_t n, float a, const float *x, float *y);

// Large problems go to a GPU; the most specific match (isa) scores highest.
#pragma omp declare variant(saxpy_sm90) \
    match(construct={target, teams, parallel, for}, \
          device={arch(nvptx), isa(sm_90)}, user={condition(N >= 4096)})
#pragma omp declare variant(saxpy_gfx90a) \
    match(construct={target, teams, parallel, for}, \
          device={arch(amdgcn), isa(gfx90a)}, user={condition(N >= 4096)})
#pragma omp declare variant(saxpy_pvc) \
    match(construct={target, teams, parallel, for}, \
          device={arch(intel_gpu_pvc)}, user={condition(N >= 4096)})
// Any GPU, also for small problems: scores lower (kind only).
#pragma omp declare variant(saxpy_gpu_small) \
    match(construct={target, teams, parallel, for}, device={kind(gpu)})
// CPUs with AVX-512.
#pragma omp declare variant(saxpy_avx512) \
    match(construct={parallel, for}, device={kind(cpu), isa(avx512f)})
void saxpy(size_t n, float a, const float *x, float *y);
