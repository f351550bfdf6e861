! expect: solve solve_gpu
subroutine solve(n, use_gpu)
  integer :: n
  logical :: use_gpu
  !$OMP DECLARE VARIANT(solve_gpu) MATCH(user={condition(use_gpu .and. .not. n .lt. 64)})
end subroutine
