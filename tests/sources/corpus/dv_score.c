// expect: f f_sm80
// expect: f f_gpu
// expect-error: 7
void f_sm80(void);
void f_gpu(void);
#pragma omp declare variant(f_sm80) match(implementation={vendor(score(10): llvm)})
#pragma omp declare variant(f_bad) match(device={isa(score(10): sm_80)})
#pragma omp declare variant(f_gpu) match(device={kind(gpu)})
void f(void);
