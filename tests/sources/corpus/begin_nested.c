// expect: my_fun my_fun$ompvariant$
// expect: other other$ompvariant$
#pragma omp begin declare variant match(device={kind(gpu)})
#pragma omp begin declare variant match(implementation={vendor(llvm)})
int my_fun(void) { return 1; }
#pragma omp end declare variant
int other(void) { return 2; }
#pragma omp end declare variant
