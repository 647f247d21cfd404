// Optimizers: sparse Adagrad/row-wise Adagrad/SGD and dense Adam/SGD against hand-computed steps, row
// initialisation as a pure function of (key, seed), exact state save/restore, and a dense
// step split into parts.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "strata/common/row.h"
#include "strata/model/optimizer.h"

namespace strata {
namespace {

std::vector<uint8_t> NewRow(const ModelSpec& spec, uint64_t key) {
  std::vector<uint8_t> row(RowLayoutOf(spec).bytes());
  InitRow(spec, key, row.data());
  return row;
}

TEST_CASE("model: InitRow is a pure function of key and seed") {
  ModelSpec spec;
  const RowLayout layout = RowLayoutOf(spec);
  const auto a = NewRow(spec, 12345);
  CHECK(a == NewRow(spec, 12345));
  CHECK(a != NewRow(spec, 12346));
  ModelSpec other_seed = spec;
  other_seed.seed = spec.seed + 1;
  CHECK(a != NewRow(other_seed, 12345));

  const float* emb = RowLayout::Embedding(a.data());
  const float* state = layout.State(a.data());
  for (int c = 0; c < spec.embedding_dim; ++c) {
    CHECK(std::fabs(emb[c]) <= spec.init_scale);
    CHECK(state[c] == spec.adagrad_initial_accumulator);
  }
  CHECK(emb[0] != emb[1]);  // coordinates draw different values
  CHECK(layout.Freq(a.data()) == 0u);
  CHECK(layout.LastPass(a.data()) == 0u);

  // Over many keys the values fill (-s, s) evenly: mean near 0, spread near s / sqrt(3).
  double sum = 0, sq = 0;
  const int kKeys = 2000;
  for (uint64_t key = 0; key < kKeys; ++key) {
    const auto row = NewRow(spec, key);
    for (int c = 0; c < spec.embedding_dim; ++c) {
      const double v = RowLayout::Embedding(row.data())[c];
      sum += v;
      sq += v * v;
    }
  }
  const double n = kKeys * spec.embedding_dim;
  CHECK(std::fabs(sum / n) < 0.02 * spec.init_scale);
  CHECK(std::sqrt(sq / n) == doctest::Approx(spec.init_scale / std::sqrt(3.0)).epsilon(0.02));
}

TEST_CASE("model: ApplySparseRow Adagrad and SGD match hand-computed steps") {
  ModelSpec spec;
  spec.embedding_dim = 2;
  spec.lr_sparse = 0.1f;
  spec.adagrad_initial_accumulator = 0.5f;
  std::vector<float> w = {1.0f, -2.0f}, s = {0.5f, 0.5f};
  const std::vector<float> g1 = {0.5f, -1.0f}, g2 = {1.0f, 0.0f};

  SUBCASE("adagrad") {
    ApplySparseRow(spec, spec.lr_sparse, w.data(), s.data(), g1.data());
    CHECK(s[0] == doctest::Approx(0.75));
    CHECK(s[1] == doctest::Approx(1.5));
    CHECK(w[0] == doctest::Approx(1.0 - 0.1 * 0.5 / std::sqrt(0.75)));
    CHECK(w[1] == doctest::Approx(-2.0 + 0.1 * 1.0 / std::sqrt(1.5)));
    ApplySparseRow(spec, spec.lr_sparse, w.data(), s.data(), g2.data());
    CHECK(s[0] == doctest::Approx(1.75));
    CHECK(s[1] == doctest::Approx(1.5));
    CHECK(w[0] == doctest::Approx(1.0 - 0.05 / std::sqrt(0.75) - 0.1 / std::sqrt(1.75)));
    CHECK(w[1] == doctest::Approx(-2.0 + 0.1 / std::sqrt(1.5)));
  }
  SUBCASE("sgd") {
    spec.sparse_optimizer = SparseOptimizerKind::kSgd;
    ApplySparseRow(spec, spec.lr_sparse, w.data(), s.data(), g1.data());
    ApplySparseRow(spec, spec.lr_sparse, w.data(), s.data(), g2.data());
    CHECK(w[0] == doctest::Approx(1.0 - 0.05 - 0.1));
    CHECK(w[1] == doctest::Approx(-2.0 + 0.1));
    CHECK(s[0] == 0.5f);  // state untouched
    CHECK(s[1] == 0.5f);
  }
  SUBCASE("rowwise-adagrad") {  // one accumulator: s += mean(g^2), shared by the coordinates
    spec.sparse_optimizer = SparseOptimizerKind::kRowwiseAdagrad;
    float acc = 0.5f;
    ApplySparseRow(spec, spec.lr_sparse, w.data(), &acc, g1.data());
    const double s1 = 0.5 + (0.25 + 1.0) / 2;
    CHECK(acc == doctest::Approx(s1));
    CHECK(w[0] == doctest::Approx(1.0 - 0.1 * 0.5 / std::sqrt(s1)));
    CHECK(w[1] == doctest::Approx(-2.0 + 0.1 * 1.0 / std::sqrt(s1)));
    ApplySparseRow(spec, spec.lr_sparse, w.data(), &acc, g2.data());
    const double s2 = s1 + 1.0 / 2;
    CHECK(acc == doctest::Approx(s2));
    CHECK(w[0] == doctest::Approx(1.0 - 0.05 / std::sqrt(s1) - 0.1 / std::sqrt(s2)));
    CHECK(w[1] == doctest::Approx(-2.0 + 0.1 / std::sqrt(s1)));
  }
}

TEST_CASE("model: lazy Adam moves a row's moments and step count only when a step touches it") {
  ModelSpec spec;
  spec.embedding_dim = 2;
  spec.sparse_optimizer = SparseOptimizerKind::kAdam;
  const RowLayout layout = RowLayoutOf(spec);
  CHECK(layout.state_floats == 5);  // m (2), v (2), steps
  auto row = NewRow(spec, 3);
  float* w = RowLayout::Embedding(row.data());
  float* state = layout.State(row.data());
  for (int i = 0; i < 5; ++i) CHECK(state[i] == 0.0f);
  // The reference, in double: bias correction by the row's own step count.
  double rw[2] = {w[0], w[1]}, m[2] = {0, 0}, v[2] = {0, 0};
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const std::vector<std::vector<float>> grads = {{0.5f, -1.0f}, {1.0f, 0.0f}, {-0.25f, 2.0f}};
  for (size_t t = 1; t <= grads.size(); ++t) {
    ApplySparseRow(spec, static_cast<float>(lr), w, state, grads[t - 1].data());
    for (int c = 0; c < 2; ++c) {
      const double g = grads[t - 1][static_cast<size_t>(c)];
      m[c] = b1 * m[c] + (1 - b1) * g;
      v[c] = b2 * v[c] + (1 - b2) * g * g;
      rw[c] -= lr * (m[c] / (1 - std::pow(b1, t))) / (std::sqrt(v[c] / (1 - std::pow(b2, t))) + eps);
      CHECK(w[c] == doctest::Approx(rw[c]).epsilon(1e-5));
      CHECK(state[c] == doctest::Approx(m[c]).epsilon(1e-5));
      CHECK(state[2 + c] == doctest::Approx(v[c]).epsilon(1e-5));
    }
    CHECK(state[4] == static_cast<float>(t));
  }
}

TEST_CASE("model: FTRL-proximal follows the reference from a zero row and zeroes by L1") {
  ModelSpec spec;
  spec.embedding_dim = 2;
  spec.sparse_optimizer = SparseOptimizerKind::kFtrl;
  spec.lr_sparse = 0.1f;
  spec.ftrl_l1 = 0.05f;
  spec.ftrl_l2 = 0.5f;
  spec.ftrl_beta = 1.0f;
  const RowLayout layout = RowLayoutOf(spec);
  CHECK(layout.state_floats == 4);  // z (2), n (2)
  auto row = NewRow(spec, 11);
  float* w = RowLayout::Embedding(row.data());
  float* state = layout.State(row.data());
  for (int i = 0; i < 2; ++i) CHECK(w[i] == 0.0f);  // z = n = 0: the row starts at zero
  for (int i = 0; i < 4; ++i) CHECK(state[i] == 0.0f);
  // The reference, in double (McMahan et al. 2013, alpha = lr).
  const double a = 0.1, l1 = 0.05, l2 = 0.5, beta = 1.0;
  double z[2] = {state[0], state[1]}, n[2] = {0, 0}, rw[2] = {w[0], w[1]};
  std::vector<std::vector<float>> grads = {{0.5f, -0.01f}, {0.2f, 0.02f}, {-1.0f, 0.01f}, {0.3f, 0.0f}};
  for (size_t step = 0; step < grads.size(); ++step) {
    std::vector<float>& g = grads[step];
    if (step == 3) g[1] = static_cast<float>(-z[1]);  // takes z[1] near 0, inside [-l1, l1]
    ApplySparseRow(spec, spec.lr_sparse, w, state, g.data());
    for (int c = 0; c < 2; ++c) {
      const double n_new = n[c] + double(g[c]) * g[c];
      z[c] += g[c] - (std::sqrt(n_new) - std::sqrt(n[c])) / a * rw[c];
      n[c] = n_new;
      rw[c] = std::fabs(z[c]) <= l1 ? 0.0 : -(z[c] - std::copysign(l1, z[c])) / ((beta + std::sqrt(n[c])) / a + l2);
      CHECK(w[c] == doctest::Approx(rw[c]).epsilon(1e-4));
    }
  }
  CHECK(w[1] == 0.0f);  // |z| <= l1: exactly zero
  CHECK(rw[1] == 0.0);
  CHECK(w[0] != 0.0f);
  // A rate of 0 (a schedule decayed to --end-lr 0) leaves the row as it is, finite.
  const std::vector<uint8_t> before = row;
  ApplySparseRow(spec, 0.0f, w, state, grads[0].data());
  CHECK(row == before);
}

TEST_CASE("model: row-wise Adagrad rows hold one state float: 76 bytes at dim 16, not 136") {
  ModelSpec spec;
  CHECK(RowLayoutOf(spec).bytes() == 136u);
  spec.sparse_optimizer = SparseOptimizerKind::kRowwiseAdagrad;
  const RowLayout layout = RowLayoutOf(spec);
  CHECK(layout.bytes() == 16u * 4 + 4 + 8);
  const auto row = NewRow(spec, 7);
  CHECK(*layout.State(row.data()) == spec.adagrad_initial_accumulator);
  CHECK(layout.Freq(row.data()) == 0u);  // right after the one state float
  CHECK(std::string(SparseOptimizerName(spec.sparse_optimizer)) == "rowwise-adagrad");
}

TEST_CASE("model: DenseOptimizer Adam matches hand-computed bias-corrected steps") {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  DenseOptimizer opt(DenseOptimizerKind::kAdam, static_cast<float>(lr), 2);
  std::vector<float> p = {1.0f, -1.0f};
  const std::vector<std::vector<float>> grads = {{0.5f, -2.0f}, {-0.25f, 1.0f}, {1.0f, 3.0f}};
  std::vector<double> ep = {1.0, -1.0}, m = {0, 0}, v = {0, 0};
  for (size_t t = 1; t <= grads.size(); ++t) {
    opt.Step(p.data(), grads[t - 1].data(), 2);
    for (int i = 0; i < 2; ++i) {
      const double g = grads[t - 1][i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
      ep[i] -= lr * mhat / (std::sqrt(vhat) + eps);
      CHECK(p[i] == doctest::Approx(ep[i]).epsilon(1e-6));
      CHECK(opt.m()[i] == doctest::Approx(m[i]).epsilon(1e-6));
      CHECK(opt.v()[i] == doctest::Approx(v[i]).epsilon(1e-6));
    }
  }
  CHECK(opt.steps() == 3);
  // The first step moves each coordinate by lr against its gradient's sign.
  DenseOptimizer fresh(DenseOptimizerKind::kAdam, 0.01f, 1);
  float q = 0.0f;
  const float g = -7.0f;
  fresh.Step(&q, &g, 1);
  CHECK(q == doctest::Approx(0.01));
}

TEST_CASE("model: DenseOptimizer SGD keeps no moments") {
  DenseOptimizer opt(DenseOptimizerKind::kSgd, 0.5f, 2);
  std::vector<float> p = {1.0f, 2.0f};
  const std::vector<float> g = {0.25f, -1.0f};
  opt.Step(p.data(), g.data(), 2);
  CHECK(p[0] == 0.875f);
  CHECK(p[1] == 2.5f);
  CHECK(opt.steps() == 1);
  CHECK(opt.m().empty());
  CHECK(opt.v().empty());
}

TEST_CASE("model: DenseOptimizer state restores exactly") {
  const size_t n = 5;
  DenseOptimizer a(DenseOptimizerKind::kAdam, 0.001f, n);
  std::vector<float> pa(n, 0.5f);
  std::vector<float> g(n);
  for (int t = 0; t < 3; ++t) {
    for (size_t i = 0; i < n; ++i) g[i] = 0.1f * static_cast<float>(i + t) - 0.2f;
    a.Step(pa.data(), g.data(), n);
  }
  DenseOptimizer b(DenseOptimizerKind::kAdam, 0.001f, n);
  REQUIRE(b.Restore(a.steps(), a.m(), a.v()).ok());
  std::vector<float> pb = pa;
  a.Step(pa.data(), g.data(), n);
  b.Step(pb.data(), g.data(), n);
  CHECK(std::memcmp(pa.data(), pb.data(), n * sizeof(float)) == 0);
  CHECK(a.m() == b.m());
  CHECK(a.v() == b.v());

  const Status wrong_size = b.Restore(1, std::vector<float>(n - 1), std::vector<float>(n));
  CHECK(wrong_size.code() == Status::Code::kInvalidArgument);
  CHECK(wrong_size.message().find("expected 5") != std::string::npos);
  CHECK_FALSE(b.Restore(-1, a.m(), a.v()).ok());
  DenseOptimizer sgd(DenseOptimizerKind::kSgd, 0.1f, n);
  CHECK_FALSE(sgd.Restore(1, a.m(), a.v()).ok());
  CHECK(sgd.Restore(7, {}, {}).ok());
  CHECK(sgd.steps() == 7);
}

// A step split into parts (any threads may run them) gives the bits of the whole step, for
// both kinds, the parts run in reverse order so that no part relies on an earlier one.
TEST_CASE("model: DenseOptimizer split into parts steps as it does whole") {
  const size_t n = 1000;
  for (DenseOptimizerKind kind : {DenseOptimizerKind::kAdam, DenseOptimizerKind::kSgd}) {
    DenseOptimizer whole(kind, 0.01f, n), split(kind, 0.01f, n);
    std::vector<float> pw(n), g(n);
    for (size_t i = 0; i < n; ++i) pw[i] = 0.001f * static_cast<float>(i) - 0.3f;
    std::vector<float> ps = pw;
    const auto reversed_thirds = [](size_t all, const auto& part) {
      for (size_t k = 3; k-- > 0;) part(all * k / 3, all * (k + 1) / 3);
    };
    for (int t = 0; t < 3; ++t) {
      for (size_t i = 0; i < n; ++i) g[i] = 0.002f * static_cast<float>((i * 7 + t) % 97) - 0.1f;
      whole.Step(pw.data(), g.data(), n);
      split.Step(ps.data(), g.data(), n, reversed_thirds);
    }
    CHECK(std::memcmp(pw.data(), ps.data(), n * sizeof(float)) == 0);
    CHECK(whole.m() == split.m());
    CHECK(whole.v() == split.v());
    CHECK(split.steps() == 3);
  }
}

}  // namespace
}  // namespace strata
