// expect: work work_big
void work_big(int n);
#pragma omp declare variant(work_big) match(user={condition(n > 1024)})
void work(int n);
