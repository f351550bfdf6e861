// expect-error: 3
// expect-error: 4
#pragma omp begin declare variant match(device={kind(gpu)}
void f(void) {}
#pragma omp end declare variant
