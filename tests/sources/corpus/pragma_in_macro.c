// expect-warning: 3
// expect-warning: 4
#include "common.h"
#define DECLARE_GPU(v) _Pragma("omp declare variant(v) match(device={kind(gpu)})")
void f(void);
