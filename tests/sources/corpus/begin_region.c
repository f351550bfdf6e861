// expect: sqr sqr$ompvariant$
#pragma omp begin declare variant match(device={kind(gpu)})
double sqr(double x) { return x * x; }
double helper(double x);
#pragma omp end declare variant
double sqr(double x);
