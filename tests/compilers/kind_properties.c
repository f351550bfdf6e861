// kind(host, cpu) is one kind selector: it adds 2^0 once (score 2), below
// arch (score 3), so varch wins. clang 14 adds 2^0 per property (score 3)
// and, on the tie, calls the last declared: vkinds.
#include <stdio.h>
void varch(void) { puts("varch"); }
void vkinds(void) { puts("vkinds"); }
#pragma omp declare variant(varch) match(device={arch(x86_64)})
#pragma omp declare variant(vkinds) match(device={kind(host, cpu)})
void base(void) { puts("base"); }
int main(void) { base(); return 0; }
