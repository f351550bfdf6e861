! expect: base_saxpy avx512_saxpy
module m
  interface
    subroutine base_saxpy(s, x, y)
      real :: s, x(:), y(:)
      !$omp declare variant(base_saxpy: avx512_saxpy) match(device={isa("core-avx512")})
    end subroutine
  end interface
end module
