// expect: launch launch$ompvariant$
// expect-warning: 5
// The AMD branch is the one a compiler sees without -DUSE_CUDA.
#ifdef USE_CUDA
#pragma omp begin declare variant match(device={arch(nvptx)})
#else
#pragma omp begin declare variant match(device={arch(amdgcn)})
#endif
void launch(void) {}
#pragma omp end declare variant
