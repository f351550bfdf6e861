// expect: vxv p_vxv
// expect: vxv t_vxv
void p_vxv(int *v1, int *v2, int *v3, int n);
void t_vxv(int *v1, int *v2, int *v3, int n);
#pragma omp declare variant(p_vxv) match(construct={parallel})
#pragma omp declare variant(t_vxv) match(construct={target})
void vxv(int *v1, int *v2, int *v3, int n);
