// expect: base_saxpy avx512_saxpy
void avx512_saxpy(int n, float s, float *x, float *y);
#pragma omp declare variant(avx512_saxpy) \
    match(device={isa("core-avx512")})
void base_saxpy(int n, float s, float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = s * x[i] + y[i];
}
