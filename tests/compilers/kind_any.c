// kind(any) against kind(host): the texts give kind(any) no score and make
// it a strict subset of kind(host), so vhost wins; GCC 12 scores kind(any)
// like kind(host) and, on the tie, calls the last declared (vany).
#include <stdio.h>
void vhost(void) { puts("vhost"); }
void vany(void) { puts("vany"); }
#pragma omp declare variant(vhost) match(device={kind(host)})
#pragma omp declare variant(vany) match(device={kind(any)})
void base(void) { puts("base"); }
int main(void) { base(); return 0; }
