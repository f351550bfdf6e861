// expect: blas::gemm gemm_gpu
// expect: lapack::gemm gemm_gpu
namespace blas {
#pragma omp declare variant(gemm_gpu) match(device={kind(gpu)})
void gemm(const float *a, float *c, int n);
}  // namespace blas
namespace lapack {
#pragma omp declare variant(gemm_gpu) match(device={kind(gpu)})
void gemm(const double *a, double *c, int n);
}  // namespace lapack
