// kind's weight is 2^l, l the context's construct count (2 here): vkind
// scores 1 + 4, vfor 1 + 2. clang 14 takes l from the selector (0 for
// vkind: 1 + 1) and calls vfor.
// context: parallel,for
#include <stdio.h>
void vfor(void) { puts("vfor"); }
void vkind(void) { puts("vkind"); }
#pragma omp declare variant(vfor) match(construct={for})
#pragma omp declare variant(vkind) match(device={kind(host)})
void base(void) { puts("base"); }
int main(void) {
#pragma omp parallel num_threads(1)
#pragma omp for
  for (int i = 0; i < 1; i++) base();
  return 0;
}
