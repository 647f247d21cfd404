// The factorization machine's term (--model deepfm): the sum-square form against the
// pairwise sum of dot products it stands for, and its gradient against finite differences;
// dense columns after the embeddings are left alone.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "strata/common/partition.h"
#include "strata/model/fm.h"

namespace strata {
namespace {

constexpr int kSlots = 5, kDim = 3, kDense = 2, kWidth = kSlots * kDim + kDense, kRows = 4;

std::vector<float> Input() {
  std::vector<float> x(static_cast<size_t>(kRows) * kWidth);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(Mix64(k + 17) >> 40) * 0x1.0p-23f - 1.0f;
  return x;
}

// sum over slot pairs s < t of <e_s, e_t>, in double.
double Pairwise(const std::vector<double>& x, int row) {
  const double* e = x.data() + static_cast<size_t>(row) * kWidth;
  double sum = 0;
  for (int s = 0; s < kSlots; ++s) {
    for (int t = s + 1; t < kSlots; ++t) {
      for (int k = 0; k < kDim; ++k) sum += e[s * kDim + k] * e[t * kDim + k];
    }
  }
  return sum;
}

TEST_CASE("model: the FM term is the pairwise sum of the slots' dot products") {
  const auto x = Input();
  std::vector<float> logits(kRows, 0.25f);
  AddFmTerm(x.data(), kRows, kWidth, kSlots, kDim, logits.data());
  const std::vector<double> xd(x.begin(), x.end());
  for (int i = 0; i < kRows; ++i) CHECK(logits[i] == doctest::Approx(0.25 + Pairwise(xd, i)).epsilon(1e-5));
}

TEST_CASE("model: the FM gradient matches finite differences and adds to the input gradient") {
  const auto x = Input();
  const std::vector<float> dlogits = {0.5f, -1.0f, 0.25f, 2.0f};
  std::vector<float> dinput(x.size(), 0.125f);
  AddFmGradient(x.data(), kRows, kWidth, kSlots, kDim, dlogits.data(), dinput.data());
  std::vector<double> xd(x.begin(), x.end());
  const double h = 1e-6;
  for (int i = 0; i < kRows; ++i) {
    for (int c = 0; c < kWidth; ++c) {
      double& v = xd[static_cast<size_t>(i) * kWidth + c];
      const double saved = v;
      v = saved + h;
      const double up = Pairwise(xd, i);
      v = saved - h;
      const double down = Pairwise(xd, i);
      v = saved;
      const double expected = 0.125 + dlogits[i] * (up - down) / (2 * h);
      INFO("row " << i << " column " << c);
      CHECK(dinput[static_cast<size_t>(i) * kWidth + c] == doctest::Approx(expected).epsilon(1e-5));
    }
  }
}

}  // namespace
}  // namespace strata
