// ZipfSampler: exact draws of ranks k in [1, n] with P(k) proportional to k^-s, by
// Hormann and Derflinger's rejection-inversion ("Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 1996). O(1) memory and expected O(1)
// time whatever n, so cardinalities of billions cost no more than of ten. Immutable after
// construction; Sample is const and thread-safe given distinct uniform sources.
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>

namespace strata::data_internal {

class ZipfSampler {
 public:
  // REQUIRES: n >= 1, s > 0.
  ZipfSampler(uint64_t n, double s) : n_(static_cast<double>(n)), s_(s) {
    assert(n >= 1 && s > 0);
    h_integral_x1_ = HIntegral(1.5) - 1.0;
    h_integral_n_ = HIntegral(n_ + 0.5);
    s_threshold_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
  }

  // `uniform` returns doubles in [0, 1); it is called once per trial (about 1.0x on average).
  template <typename Uniform>
  uint64_t Sample(Uniform&& uniform) const {
    for (;;) {
      double u = h_integral_n_ + uniform() * (h_integral_x1_ - h_integral_n_);
      double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1.0) k = 1.0;
      if (k > n_) k = n_;
      if (k - x <= s_threshold_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<uint64_t>(k);
    }
  }

 private:
  // H(x) = x^-s; HIntegral is an antiderivative of it, HIntegralInverse its inverse.
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegral(double x) const {
    double log_x = std::log(x);
    return Helper2((1.0 - s_) * log_x) * log_x;
  }
  double HIntegralInverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // guards rounding at the distribution's tail
    return std::exp(Helper1(t) * x);
  }
  // log1p(x)/x and expm1(x)/x, continuous through x = 0 (where s == 1 would divide by 0).
  static double Helper1(double x) {
    return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double Helper2(double x) {
    return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
  }

  double n_;
  double s_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_threshold_;
};

}  // namespace strata::data_internal
