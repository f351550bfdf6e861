// expect-meta: fib
int fib(int n) {
  int i, j;
#pragma omp metadirective when(user={condition(n > 8)}: task shared(i)) otherwise()
  i = fib(n - 1);
  return i;
}
