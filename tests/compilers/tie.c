// Two variants with equal scores: the OpenMP texts leave the choice open
// for declare variant; GCC 12 and clang 14 call the last declared (v2).
// tests/compilers/compiler_profiles_test.sh builds and runs it.
#include <stdio.h>

void v1(void) { puts("v1"); }
void v2(void) { puts("v2"); }

#pragma omp declare variant(v1) match(device={kind(host)})
#pragma omp declare variant(v2) match(device={kind(host)})
void base(void) { puts("base"); }

int main(void) {
  base();
  return 0;
}
