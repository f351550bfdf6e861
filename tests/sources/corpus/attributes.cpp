// expect: f f_gpu
// expect: g g1
// expect: g g2
[[omp::directive(declare variant(f_gpu) match(device={kind(gpu)}))]]
void f(int);
[[omp::sequence(directive(declare variant(g1) match(device={kind(gpu)})), directive(declare variant(g2) match(device={kind(cpu)})))]]
void g(int);
