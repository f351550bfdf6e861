// expect: axpy axpy_gpu
void axpy_gpu(int n);
_Pragma("omp declare variant(axpy_gpu) match(device={kind(gpu)})")
void axpy(int n);
