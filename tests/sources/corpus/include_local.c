// expect-warning: 4
// expect: h h_gpu
#include <stdio.h>
#include "kernels.h"
void h_gpu(void);
#pragma omp declare variant(h_gpu) match(device={kind(gpu)})
void h(void);
