// expect: Mat::operator* mul_gpu
// expect: operator+ add_gpu
struct Mat {
#pragma omp declare variant(mul_gpu) match(device={kind(gpu)})
  Mat operator*(const Mat &) const;
};
#pragma omp declare variant(add_gpu) match(device={kind(gpu)})
Mat operator+(const Mat &, const Mat &);
