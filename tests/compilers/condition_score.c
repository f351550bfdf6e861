// A score in condition(...): the texts allow it (v1 scores 5 + 1); clang
// 14 refuses to build the program.
#include <stdio.h>
void v1(void) { puts("v1"); }
void v2(void) { puts("v2"); }
#pragma omp declare variant(v1) match(user={condition(score(5): 1)})
#pragma omp declare variant(v2) match(device={kind(host)})
void base(void) { puts("base"); }
int main(void) { base(); return 0; }
