// expect: scale scale_gpu
#define GPU_ARCH amdgcn
#define THRESHOLD (1 << 0) + 4096
void scale_gpu(int n);
#pragma omp declare variant(scale_gpu) match(device={arch(GPU_ARCH)}, user={condition(n > 4096)})
void scale(int n);
