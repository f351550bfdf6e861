// expect: test test_llvm
// expect: test test_gnu
int test_llvm(void);
int test_gnu(void);
#pragma omp declare variant(test_llvm) match(implementation={vendor(llvm)})
#pragma omp declare variant(test_gnu) match(implementation = {vendor(gnu)})
int test(void) { return 0; }
