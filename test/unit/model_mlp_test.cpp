// Mlp: forward against a double-precision reference, backward against finite differences
// of that reference, row independence from batch composition, init, and the fused loss.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "strata/common/partition.h"
#include "strata/model/mlp.h"

namespace strata {
namespace {

std::vector<float> RandomVector(uint64_t seed, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) {
    v[k] = lo + (hi - lo) * static_cast<float>(Mix64(seed * 1000003 + k) >> 40) * 0x1.0p-24f;
  }
  return v;
}

// The same network in double with plain loops, reading mlp.h's documented layout.
std::vector<double> ReferenceForward(const Mlp& mlp, const std::vector<double>& p,
                                     const std::vector<double>& x, int B) {
  std::vector<double> a = x;
  for (int l = 0; l < mlp.num_layers(); ++l) {
    const int in = mlp.fan_in(l), out = mlp.fan_out(l);
    std::vector<double> h(static_cast<size_t>(B) * out);
    for (int i = 0; i < B; ++i) {
      for (int j = 0; j < out; ++j) {
        double s = p[mlp.bias_offset(l) + j];
        for (int k = 0; k < in; ++k) s += a[i * in + k] * p[mlp.weight_offset(l) + k * out + j];
        h[i * out + j] = (l + 1 < mlp.num_layers() && s < 0) ? 0.0 : s;
      }
    }
    a = std::move(h);
  }
  return a;
}

// Objective sum_i c_i logit_i, so dlogits = c.
double Objective(const Mlp& mlp, const std::vector<double>& p, const std::vector<double>& x,
                 int B, const std::vector<float>& c) {
  std::vector<double> z = ReferenceForward(mlp, p, x, B);
  double s = 0;
  for (int i = 0; i < B; ++i) s += c[i] * z[i];
  return s;
}

void CheckGradients(const ModelSpec& spec, int B) {
  const Mlp mlp(spec);
  std::vector<float> params(mlp.num_params());
  mlp.InitParams(7, params.data());
  // Nonzero biases so the bias path is exercised too.
  for (int l = 0; l < mlp.num_layers(); ++l) {
    for (int j = 0; j < mlp.fan_out(l); ++j) params[mlp.bias_offset(l) + j] = 0.05f * (j % 3 - 1);
  }
  std::vector<float> x = RandomVector(11, static_cast<size_t>(B) * mlp.input_width(), -1, 1);
  std::vector<float> c = RandomVector(12, B, -1, 1);

  auto ws = mlp.MakeWorkspace(B);
  std::vector<float> logits(B), dparams(params.size(), 123.0f), dinput(x.size(), 123.0f);
  mlp.Forward(params.data(), x.data(), B, &ws, logits.data());
  mlp.Backward(params.data(), x.data(), B, c.data(), &ws, dparams.data(), dinput.data());

  std::vector<double> pd(params.begin(), params.end()), xd(x.begin(), x.end());
  std::vector<double> ref = ReferenceForward(mlp, pd, xd, B);
  for (int i = 0; i < B; ++i) CHECK(logits[i] == doctest::Approx(ref[i]).epsilon(1e-5));

  const double h = 1e-6;
  auto check = [&](std::vector<double>* v, const std::vector<float>& analytic) {
    for (size_t k = 0; k < v->size(); ++k) {
      const double saved = (*v)[k];
      (*v)[k] = saved + h;
      const double up = Objective(mlp, pd, xd, B, c);
      (*v)[k] = saved - h;
      const double down = Objective(mlp, pd, xd, B, c);
      (*v)[k] = saved;
      const double fd = (up - down) / (2 * h);
      INFO("coordinate " << k);
      CHECK(std::fabs(analytic[k] - fd) <= 2e-5 + 1e-4 * std::fabs(fd));
    }
  };
  check(&pd, dparams);
  check(&xd, dinput);
}

TEST_CASE("model: Mlp backward matches finite differences (hidden layers)") {
  ModelSpec spec;
  spec.num_slots = 2;
  spec.embedding_dim = 3;
  spec.num_dense = 2;
  spec.mlp = {6, 5};
  CheckGradients(spec, 4);
  CheckGradients(spec, 1);
}

TEST_CASE("model: Mlp backward matches finite differences (no hidden layer)") {
  ModelSpec spec;
  spec.num_slots = 1;
  spec.embedding_dim = 4;
  spec.num_dense = 1;
  spec.mlp = {};
  CheckGradients(spec, 3);
}

TEST_CASE("model: Mlp layout and FLOP count of the Criteo shape") {
  const Mlp mlp{ModelSpec{}};
  CHECK(mlp.input_width() == 26 * 16 + 13);
  CHECK(mlp.num_layers() == 4);
  CHECK(mlp.num_params() == 430u * 512 + 513 * 256 + 257 * 128 + 129);
  CHECK(mlp.weight_offset(1) == 430u * 512);
  CHECK(mlp.bias_offset(3) == mlp.num_params() - 1);
  const double macs = 429 * 512 + 512 * 256 + 256 * 128 + 128;
  CHECK(mlp.flops_per_example() == doctest::Approx(6.0 * macs));
}

// Found by the checkpoint-metadata fuzzer: a width of INT_MAX overflowed `fan_in + 1`.
TEST_CASE("model: Mlp counts the parameters of the widest layers without overflow") {
  ModelSpec spec;
  spec.mlp = {2147483647};
  const Mlp mlp(spec);
  const size_t in = 26 * 16 + 13, wide = 2147483647;
  CHECK(mlp.num_params() == (in + 1) * wide + (wide + 1) * 1);
}

// Largest |a_k - b_k| relative to scale.
double RelativeError(const float* a, const float* b, size_t n, double scale) {
  double diff = 0;
  for (size_t k = 0; k < n; ++k) diff = std::max(diff, std::fabs(static_cast<double>(a[k]) - b[k]));
  return diff / scale;
}

double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// A row's logit and input gradient, computed in batches of several sizes, against the same
// row inside one batch of 64: they agree to float rounding (relative to the batch's largest
// value: a single logit can cancel to near zero). Bitwise agreement depends on the CPU's
// GEMM kernels (OpenBLAS picks per microarchitecture and per product size how to block the
// sum over k), so it is no invariant: the trainer's results never depend on it, since every
// topology cuts the same batches.
TEST_CASE("model: Mlp rows are independent of batch composition") {
  const Mlp mlp{ModelSpec{}};  // the production shape, so BLAS picks its real kernels
  const int in = mlp.input_width();
  std::vector<float> params(mlp.num_params());
  mlp.InitParams(3, params.data());
  const int kRows = 64;
  std::vector<float> x = RandomVector(5, static_cast<size_t>(kRows) * in, -1, 1);
  std::vector<float> dl = RandomVector(6, kRows, -1, 1);
  auto ws = mlp.MakeWorkspace(kRows);
  std::vector<float> dparams(mlp.num_params());

  auto run = [&](int first, int B, std::vector<float>* logits, std::vector<float>* dinput) {
    logits->resize(B);
    dinput->resize(static_cast<size_t>(B) * in);
    const float* xb = x.data() + static_cast<size_t>(first) * in;
    mlp.Forward(params.data(), xb, B, &ws, logits->data());
    mlp.Backward(params.data(), xb, B, dl.data() + first, &ws, dparams.data(), dinput->data());
  };
  std::vector<float> all_logits, all_dinput;
  run(0, kRows, &all_logits, &all_dinput);
  for (int B : {1, 7, 8, 13, 64}) {
    for (int first = 0; first + B <= kRows; first += std::max(B, 9)) {
      std::vector<float> logits, dinput;
      run(first, B, &logits, &dinput);
      INFO("batch " << B << " at row " << first);
      const float* ref_logits = all_logits.data() + first;
      const float* ref_dinput = all_dinput.data() + static_cast<size_t>(first) * in;
      CHECK(RelativeError(logits.data(), ref_logits, B, MaxAbs(all_logits)) <= 1e-6);
      CHECK(RelativeError(dinput.data(), ref_dinput, dinput.size(), MaxAbs(all_dinput)) <= 1e-6);
    }
  }
}

TEST_CASE("model: Mlp InitParams is deterministic He-uniform with zero biases") {
  const Mlp mlp{ModelSpec{}};
  std::vector<float> a(mlp.num_params()), b(a.size()), c(a.size());
  mlp.InitParams(42, a.data());
  mlp.InitParams(42, b.data());
  mlp.InitParams(43, c.data());
  CHECK(a == b);
  CHECK(a != c);
  for (int l = 0; l < mlp.num_layers(); ++l) {
    const float bound = std::sqrt(6.0f / mlp.fan_in(l));
    double sum = 0, max_abs = 0;
    for (size_t k = mlp.weight_offset(l); k < mlp.bias_offset(l); ++k) {
      sum += a[k];
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(a[k])));
    }
    const double n = static_cast<double>(mlp.bias_offset(l) - mlp.weight_offset(l));
    CHECK(max_abs <= bound);
    CHECK(max_abs > 0.9 * bound);
    CHECK(std::fabs(sum / n) < 0.1 * bound);
    for (int j = 0; j < mlp.fan_out(l); ++j) CHECK(a[mlp.bias_offset(l) + j] == 0.0f);
  }
}

TEST_CASE("model: LossAndGrad is sigmoid cross-entropy, stable at extreme logits") {
  const std::vector<float> z = {0.0f, 2.0f, -3.0f, 100.0f, -100.0f, 100.0f};
  const std::vector<float> y = {1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f};
  std::vector<float> d(z.size());
  const double sum = LossAndGrad(z.data(), y.data(), static_cast<int>(z.size()), 0.5f, d.data());
  const double expected = std::log(2.0) + (2.0 + std::log1p(std::exp(-2.0))) +
                          std::log1p(std::exp(-3.0)) + 3.0 + 100.0 + 0.0 + 0.0;
  CHECK(sum == doctest::Approx(expected).epsilon(1e-12));
  CHECK(d[0] == doctest::Approx(-0.25));
  CHECK(d[1] == doctest::Approx(0.5 / (1 + std::exp(-2.0))));
  CHECK(d[2] == doctest::Approx(0.5 * (1 / (1 + std::exp(3.0)) - 1)));
  CHECK(d[3] == doctest::Approx(0.5));
  CHECK(d[4] == doctest::Approx(0.0));
  CHECK(d[5] == doctest::Approx(0.0));
  for (float g : d) CHECK(std::isfinite(g));
}

}  // namespace
}  // namespace strata
