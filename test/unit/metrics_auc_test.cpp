// Exact AUC and log loss: hand examples with ties, undefined cases, agreement with the
// pairwise definition on random data with many ties, and order independence.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/common/partition.h"
#include "strata/metrics/auc.h"

namespace strata {
namespace {

double Auc(const std::vector<float>& s, const std::vector<float>& y) {
  REQUIRE(s.size() == y.size());
  return ExactAuc(s.data(), y.data(), s.size());
}

// The definition: over all (positive, negative) pairs, 1 if the positive scores higher,
// 1/2 on a tie.
double PairwiseAuc(const std::vector<float>& s, const std::vector<float>& y) {
  double credit = 0, pairs = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = 0; j < s.size(); ++j) {
      if (y[i] > 0.5f && y[j] <= 0.5f) {
        pairs += 1;
        credit += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
      }
    }
  }
  return credit / pairs;
}

TEST_CASE("metrics: ExactAuc on hand examples") {
  CHECK(Auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == 0.75);
  CHECK(Auc({0.1f, 0.2f, 0.3f}, {0, 1, 1}) == 1.0);
  CHECK(Auc({0.3f, 0.2f, 0.1f}, {0, 1, 1}) == 0.0);
  // Ties get half credit: pairs (0.5+,0.1-)=1, (0.5+,0.5-)=1/2, (0.9+,*)=2 -> 3.5/4.
  CHECK(Auc({0.1f, 0.5f, 0.5f, 0.9f}, {0, 1, 0, 1}) == 0.875);
  CHECK(Auc({0.5f, 0.5f, 0.5f, 0.5f}, {0, 1, 0, 1}) == 0.5);
}

TEST_CASE("metrics: ExactAuc is NaN when a class is absent") {
  CHECK(std::isnan(Auc({0.1f, 0.9f}, {1, 1})));
  CHECK(std::isnan(Auc({0.1f, 0.9f}, {0, 0})));
  CHECK(std::isnan(ExactAuc(nullptr, nullptr, 0)));
}

TEST_CASE("metrics: ExactAuc equals the pairwise definition and ignores order") {
  const size_t n = 600;
  std::vector<float> s(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = Mix64(i);
    s[i] = static_cast<float>(h % 37) / 37.0f;  // few distinct scores: many ties
    y[i] = ((h >> 20) % 100) < 30 + 40 * s[i] ? 1.0f : 0.0f;
  }
  const double auc = Auc(s, y);
  CHECK(auc == doctest::Approx(PairwiseAuc(s, y)).epsilon(1e-12));
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = (i * 7919) % n;  // 7919 is prime to 600
  std::vector<float> ps(n), py(n);
  for (size_t i = 0; i < n; ++i) {
    ps[i] = s[perm[i]];
    py[i] = y[perm[i]];
  }
  CHECK(Auc(ps, py) == auc);  // bitwise
}

TEST_CASE("metrics: LogLoss is the clipped mean cross-entropy") {
  const std::vector<float> p = {0.9f, 0.2f};
  const std::vector<float> y = {1, 0};
  CHECK(LogLoss(p.data(), y.data(), 2) ==
        doctest::Approx(-(std::log(0.9) + std::log(0.8)) / 2).epsilon(1e-7));
  const std::vector<float> extreme = {0.0f, 1.0f};
  const std::vector<float> wrong = {1, 0};
  CHECK(LogLoss(extreme.data(), wrong.data(), 2) == doctest::Approx(-std::log(1e-7)));
  CHECK(LogLoss(extreme.data(), y.data() + 1, 1) == doctest::Approx(-std::log1p(-1e-7)));
  CHECK(std::isnan(LogLoss(nullptr, nullptr, 0)));
}

}  // namespace
}  // namespace strata
