// Interval: a range of accepted numbers with open or closed ends, for options whose bounds
// must read the same wherever they are checked (a flag table and the module that takes the
// value). A missing end is an infinite one. Plain value type; constexpr; thread-safe.
#pragma once

#include <limits>
#include <string>

namespace strata {

struct Interval {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo = -kInf;
  bool lo_open = true;
  double hi = kInf;
  bool hi_open = true;

  constexpr bool Contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  constexpr bool bounded() const { return lo != -kInf || hi != kInf; }
  // "(0, 1]", "[1, 16]", "> 0", ">= 0", "<= 16"; "" when unbounded.
  std::string ToString() const;
};

// The intervals options use most.
constexpr Interval Positive() { return {0, true, Interval::kInf, true}; }
constexpr Interval AtLeast(double lo) { return {lo, false, Interval::kInf, true}; }
constexpr Interval PositiveAtMost(double hi) { return {0, true, hi, false}; }

}  // namespace strata
