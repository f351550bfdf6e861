// expect: twice twice_gpu
template <typename T> T twice_gpu(T x);
#pragma omp declare variant(twice_gpu) match(device={kind(gpu)})
template <typename T> T twice(T x) { return x + x; }
