// A repeated construct: in {parallel, for, parallel} the texts put
// construct={parallel} at its highest position (3: 1 + 4), above
// construct={for} (1 + 2). clang 14 takes the lowest (1: 1 + 1) and calls
// vfor. GCC 12, counting from the innermost, also takes position 1, worth
// 4 to it: vpar.
// context: parallel,for,parallel
#include <stdio.h>
void vpar(void) { puts("vpar"); }
void vfor(void) { puts("vfor"); }
#pragma omp declare variant(vpar) match(construct={parallel})
#pragma omp declare variant(vfor) match(construct={for})
void base(void) { puts("base"); }
int main(void) {
#pragma omp parallel num_threads(1)
#pragma omp for
  for (int i = 0; i < 1; i++) {
#pragma omp parallel num_threads(1)
    base();
  }
  return 0;
}
