// expect: vadd vadd_dev
void vadd_dev(float *a, float *b, int n, void *interop);
#pragma omp declare variant(vadd_dev) match(construct={dispatch}) \
    adjust_args(need_device_ptr: a, b) append_args(interop(targetsync))
void vadd(float *a, float *b, int n);
