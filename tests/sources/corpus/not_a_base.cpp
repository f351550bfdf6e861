// expect-error: 4
// expect-error: 9
struct S {
#pragma omp declare variant(s_gpu) match(device={kind(gpu)})
  S();
  ~S();
};
namespace n {}
#pragma omp declare variant(x_gpu) match(device={kind(gpu)})
namespace m { void x(); }
