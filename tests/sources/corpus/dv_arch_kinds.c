// expect: add add_nvptx
// expect: add add_amd
// expect: add add_host
int add_nvptx(int a, int b);
int add_amd(int a, int b);
int add_host(int a, int b);
#pragma omp declare variant(add_nvptx) match(device={arch(nvptx, nvptx64)})
#pragma omp declare variant(add_amd) match(device={arch(amdgcn)})
#pragma omp declare variant(add_host) match(device={kind(host)})
int add(int a, int b) { return a + b; }
