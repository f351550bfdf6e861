// The best variant names simd: the texts call it (vsimd scores 1 + 1 + 2 +
// 4 in {parallel, for, simd}); GCC 12 calls the base function, not even
// the next best (vpar).
// context: parallel,for,simd
#include <stdio.h>
void vpar(void) { puts("vpar"); }
void vsimd(void) { puts("vsimd"); }
#pragma omp declare variant(vpar) match(construct={parallel})
#pragma omp declare variant(vsimd) match(construct={parallel,for,simd})
void base(void) { puts("base"); }
int main(void) {
#pragma omp parallel for simd num_threads(1)
  for (int i = 0; i < 1; i++) base();
  return 0;
}
