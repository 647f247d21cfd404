// Exact AUC by sorting and counting tie groups; log loss by a fixed-order double sum.
#include "strata/metrics/auc.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace strata {

double ExactAuc(const float* scores, const float* labels, size_t n) {
  std::vector<std::pair<float, bool>> items(n);
  for (size_t i = 0; i < n; ++i) {
    assert(!std::isnan(scores[i]));
    items[i] = {scores[i], labels[i] > 0.5f};
  }
  // Only the score orders the pairs; each tie group is counted as a whole, so the order
  // inside a group (and thus the sort's stability) cannot change the result.
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // twice_credit = sum over positives of 2 * (#negatives below) + (#negatives tied):
  // integers, so the sum is exact and order-free (at most 2 P N < 2^63 for n < 2^32).
  uint64_t negatives_below = 0, positives = 0, twice_credit = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint64_t pos = 0, neg = 0;
    for (; j < n && items[j].first == items[i].first; ++j) (items[j].second ? pos : neg) += 1;
    twice_credit += pos * (2 * negatives_below + neg);
    negatives_below += neg;
    positives += pos;
    i = j;
  }
  if (positives == 0 || negatives_below == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(twice_credit) /
         (2.0 * static_cast<double>(positives) * static_cast<double>(negatives_below));
}

double LogLoss(const float* probs, const float* labels, size_t n) {
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  constexpr double kClip = 1e-7;
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double p = std::clamp(static_cast<double>(probs[i]), kClip, 1.0 - kClip);
    const double y = labels[i];
    sum -= y * std::log(p) + (1.0 - y) * std::log(1.0 - p);
  }
  return sum / static_cast<double>(n);
}

}  // namespace strata
