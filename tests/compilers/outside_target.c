// A call in a target region inside a parallel region: the texts' construct
// set ends at the target construct ({target}), so construct={parallel,
// target} does not match and vt is called. clang 14 keeps parallel in the
// set and calls vpt. (On the host, without offload targets.)
// context: parallel,target
#include <stdio.h>
void vt(void) { puts("vt"); }
void vpt(void) { puts("vpt"); }
#pragma omp declare target
#pragma omp declare variant(vt) match(construct={target})
#pragma omp declare variant(vpt) match(construct={parallel,target})
void base(void) { puts("base"); }
#pragma omp end declare target
int main(void) {
#pragma omp parallel num_threads(1)
  {
#pragma omp target
    base();
  }
  return 0;
}
