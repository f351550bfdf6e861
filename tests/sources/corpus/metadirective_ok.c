// expect-meta: work
void work(int n, float *a) {
#pragma omp metadirective when(device={kind(gpu)}: target teams distribute parallel for) \
    when(user={condition(n > 100)}: parallel for) otherwise(simd)
  for (int i = 0; i < n; i++) a[i] = 0;
}
