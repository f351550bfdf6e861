! expect: k k_cpu
! expect-warning: 5
subroutine k()
#ifdef USE_GPU
  !$omp declare variant(k_gpu) match(device={kind(gpu)})
#else
  !$omp declare variant(k_cpu) match(device={kind(cpu)})
#endif
end subroutine
