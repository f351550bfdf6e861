// A metadirective in a parallel region: its construct set is {parallel},
// so the texts pick when(construct={parallel}: ...). clang 14 resolves
// metadirectives with an empty construct set and takes the default. GCC 12
// ignores metadirectives (-Wall: "ignoring '#pragma omp metadirective'"),
// so only clang 14 is compared; eval --compiler=gcc-12 refuses it.
// The program prints the directive that ran.
// context: parallel
// compilers: clang-14
#include <omp.h>
#include <stdio.h>
static void report(void) {
  if (omp_get_thread_num() == 0) {
    printf("parallel num_threads(%d)\n", omp_get_num_threads());
  }
}
int main(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(1)
  {
#pragma omp metadirective when(construct={parallel}: parallel num_threads(2)) \
    default(parallel num_threads(3))
    report();
  }
  return 0;
}
