// expect: math::Vec::dot dot_simd
namespace math {
class Vec {
 public:
#pragma omp declare variant(dot_simd) match(construct={simd})
  double dot(const Vec &other) const;
};
}  // namespace math
