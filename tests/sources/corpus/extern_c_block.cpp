// expect: c_kernel c_kernel_gpu
extern "C" {
#pragma omp declare variant(c_kernel_gpu) match(device={kind(gpu)})
void c_kernel(float *x, int n);
}
