// expect: good good_gpu
// expect-error: 6
void good_gpu(void);
#pragma omp declare variant(good_gpu) match(device={kind(gpu)})
void good(void);
#pragma omp declare variant(bad_gpu) match(device={kind(gpu)}, device={kind(cpu)})
void bad(void);
