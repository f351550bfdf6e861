// expect: g g_cuda
// expect-warning: 4
void g_cuda(void);
#if __has_include(<cuda.h>)
#pragma omp declare variant(g_cuda) match(device={arch(nvptx)})
#endif
void g(void);
