! expect-error: 3
subroutine s(n)
  !$omp declare variant(s_gpu) match(device={kind(gpu)}),, adjust_args(nothing: n)
end subroutine
