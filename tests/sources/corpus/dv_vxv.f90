! expect: vxv p_vxv
! expect: vxv t_vxv
module subs
contains
  subroutine vxv(v1, v2, v3)
    integer, intent(in) :: v1(:), v2(:)
    integer, intent(out) :: v3(:)
    !$omp declare variant(p_vxv) match(construct={parallel})
    !$omp declare variant(t_vxv) &
    !$omp&  match(construct={target})
  end subroutine
end module
