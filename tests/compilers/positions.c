// Construct positions in the context {parallel, for}: the texts count from
// the outermost, so construct={for} (position 2) adds 2 and
// construct={parallel} (position 1) adds 1: vfor wins. GCC 12 counts from
// the innermost (parallel adds 2, for adds 1) and calls vpar.
// context: parallel,for
#include <stdio.h>
void vpar(void) { puts("vpar"); }
void vfor(void) { puts("vfor"); }
#pragma omp declare variant(vpar) match(construct={parallel})
#pragma omp declare variant(vfor) match(construct={for})
void base(void) { puts("base"); }
int main(void) {
#pragma omp parallel num_threads(1)
#pragma omp for
  for (int i = 0; i < 1; i++) base();
  return 0;
}
