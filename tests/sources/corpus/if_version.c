// expect: k k_51
// expect-warning: 8
void k_51(void);
void k_50(void);
#if _OPENMP >= 202011
#pragma omp declare variant(k_51) match(construct={dispatch})
#else
#pragma omp declare variant(k_50) match(construct={parallel})
#endif
void k(void);
