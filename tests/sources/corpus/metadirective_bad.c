// expect-error: 3
void work(int n) {
#pragma omp metadirective when(user={condition(n > 1)}: metadirective default(parallel)) default(bad_directive)
  ;
}
