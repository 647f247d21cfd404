// OnednnGemm in fp32 and with bf16 operands against a scalar reference on the same
// (bf16-rounded) operands, in every transpose and with accumulation; the fused bias and ReLU
// against the bias, an accumulating product and a ReLU, and written in bf16 against the
// rounding of its fp32 result; a caller's bf16 rounding read in place of the values; the
// same bits for 1 and 2 threads; the Mlp's bf16 forward and backward against its fp32 ones,
// its top gradient against the steps it fuses, and on an input written already rounded
// against its bf16 ones. The bf16 cases are
// skipped, with a message, on a CPU without bf16 instructions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/onednn_gemm.h"
#include "strata/common/half.h"
#include "strata/common/partition.h"
#include "strata/model/mlp.h"

namespace strata {
namespace {

std::vector<float> Random(uint64_t seed, size_t n) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = static_cast<float>(Mix64(seed * 1000003 + k) >> 40) * 0x1.0p-23f - 1.0f;
  return v;
}

// x as the product reads it.
double Operand(DensePrecision precision, float x) {
  return precision == DensePrecision::kBf16 ? Bf16ToFloat(FloatToBf16(x)) : x;
}

// C (M, N) = op(A) op(B) (+ C0) in double over the operands as the product reads them.
std::vector<double> Reference(DensePrecision precision, bool ta, bool tb, int M, int N, int K,
                              const std::vector<float>& A, const std::vector<float>& B,
                              const std::vector<float>* C0) {
  std::vector<double> C(static_cast<size_t>(M) * N);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = C0 ? (*C0)[i * N + j] : 0.0;
      for (int k = 0; k < K; ++k) s += Operand(precision, ta ? A[k * M + i] : A[i * K + k]) * Operand(precision, tb ? B[j * K + k] : B[k * N + j]);
      C[i * N + j] = s;
    }
  }
  return C;
}

bool SkipWithoutBf16() {
  if (OnednnGemm::Bf16Supported()) return false;
  MESSAGE("skipped: this CPU has no bf16 instructions (AVX512-BF16 or AMX)");
  return true;
}

// The precisions this CPU computes: fp32, and bf16 where it has the instructions.
std::vector<DensePrecision> Precisions() {
  std::vector<DensePrecision> all = {DensePrecision::kFp32};
  if (!SkipWithoutBf16()) all.push_back(DensePrecision::kBf16);
  return all;
}

TEST_CASE("onednn gemm: every transpose, with and without accumulation, against a scalar reference") {
  OnednnGemm gemm(1);
  const int M = 37, N = 19, K = 53;
  for (DensePrecision precision : Precisions()) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (int acc = 0; acc < 2; ++acc) {
          const auto A = Random(1 + ta, static_cast<size_t>(M) * K), B = Random(3 + tb, static_cast<size_t>(K) * N);
          const auto C0 = Random(5, static_cast<size_t>(M) * N);
          std::vector<float> C = C0;
          gemm.Run(precision, ta, tb, M, N, K, A.data(), B.data(), acc, C.data());
          const auto ref = Reference(precision, ta, tb, M, N, K, A, B, acc ? &C0 : nullptr);
          INFO("bf16 " << (precision == DensePrecision::kBf16) << " trans_a " << ta << " trans_b " << tb
                       << " accumulate " << acc);
          for (size_t k = 0; k < C.size(); ++k) CHECK(std::fabs(C[k] - ref[k]) <= 1e-5 * K);
        }
      }
    }
  }
}

// Rounds x to bf16 as the products do (FloatToBf16), each value scaled by `scale`.
std::vector<uint16_t> RoundedBf16(const std::vector<float>& x, float scale) {
  std::vector<uint16_t> r(x.size());
  for (size_t k = 0; k < x.size(); ++k) r[k] = FloatToBf16(x[k] * scale);
  return r;
}

TEST_CASE("onednn gemm: a fused bias and ReLU gives the bits of the bias, an accumulating product and a ReLU; in bf16, written in bf16, their rounding") {
  OnednnGemm gemm(1);
  const int M = 300, N = 70, K = 129;
  const auto A = Random(11, static_cast<size_t>(M) * K), B = Random(12, static_cast<size_t>(K) * N);
  const auto bias = Random(13, N);
  for (DensePrecision precision : Precisions()) {
    std::vector<float> fused(static_cast<size_t>(M) * N), apart(fused.size());
    gemm.RunBiasRelu(precision, M, N, K, A.data(), B.data(), bias.data(), fused.data());
    for (int i = 0; i < M; ++i) std::copy(bias.begin(), bias.end(), apart.begin() + static_cast<size_t>(i) * N);
    gemm.Run(precision, false, false, M, N, K, A.data(), B.data(), true, apart.data());
    size_t zeros = 0;
    for (float& v : apart) {
      v = std::max(v, 0.0f);
      zeros += v == 0.0f;
    }
    INFO("bf16 " << (precision == DensePrecision::kBf16));
    CHECK(fused == apart);
    CHECK(zeros > apart.size() / 4);  // the ReLU cut about half
    CHECK(zeros < apart.size() * 3 / 4);
    if (precision == DensePrecision::kBf16) {
      std::vector<uint16_t> narrow(fused.size());
      gemm.RunBiasReluToBf16(M, N, K, A.data(), B.data(), bias.data(), narrow.data());
      CHECK(narrow == RoundedBf16(fused, 1.0f));
    }
  }
}

TEST_CASE("onednn gemm: a bf16 product reads the caller's rounding of an operand where it has one") {
  if (SkipWithoutBf16()) return;
  OnednnGemm gemm(1);
  const int M = 45, N = 33, K = 70;
  const auto A = Random(21, static_cast<size_t>(M) * K), B = Random(22, static_cast<size_t>(K) * N);
  const auto bias = Random(23, N);
  const auto A16 = RoundedBf16(A, 1.0f), B16 = RoundedBf16(B, 1.0f);
  std::vector<float> own(static_cast<size_t>(M) * N), given(own.size());
  gemm.Run(DensePrecision::kBf16, false, false, M, N, K, A.data(), B.data(), false, own.data());
  gemm.Run(DensePrecision::kBf16, false, false, M, N, K, GemmOperand(A.data(), A16.data()),
           GemmOperand(B.data(), B16.data()), false, given.data());
  CHECK(own == given);
  gemm.RunBiasRelu(DensePrecision::kBf16, M, N, K, A.data(), B.data(), bias.data(), own.data());
  gemm.RunBiasRelu(DensePrecision::kBf16, M, N, K, GemmOperand(A.data(), A16.data()), B.data(), bias.data(),
                   given.data());
  CHECK(own == given);
  // A rounding of 2A in place of A's (exact: doubling keeps the mantissa) doubles the product.
  const auto A2 = RoundedBf16(A, 2.0f);
  gemm.Run(DensePrecision::kBf16, false, false, M, N, K, A.data(), B.data(), false, own.data());
  gemm.Run(DensePrecision::kBf16, false, false, M, N, K, GemmOperand(A.data(), A2.data()), B.data(), false,
           given.data());
  for (size_t k = 0; k < own.size(); ++k) CHECK(given[k] == 2.0f * own[k]);
}

TEST_CASE("onednn gemm: the same bits whatever the thread count (the MLP's shapes)") {
  const int B = 2048, in = 429, out = 512;
  const auto a = Random(7, static_cast<size_t>(B) * in), w = Random(8, static_cast<size_t>(in) * out);
  const auto dz = Random(9, static_cast<size_t>(B) * out);
  OnednnGemm one(1), two(2);
  struct Product { bool ta, tb; int M, N, K; const float *A, *B; };
  const Product products[] = {{false, false, B, out, in, a.data(), w.data()},   // forward
                              {true, false, in, out, B, a.data(), dz.data()},   // weight gradient
                              {false, true, B, in, out, dz.data(), w.data()}};  // input gradient
  for (DensePrecision precision : Precisions()) {
    for (const Product& p : products) {
      std::vector<float> c1(static_cast<size_t>(p.M) * p.N), c2(c1.size());
      one.Run(precision, p.ta, p.tb, p.M, p.N, p.K, p.A, p.B, false, c1.data());
      two.Run(precision, p.ta, p.tb, p.M, p.N, p.K, p.A, p.B, false, c2.data());
      CHECK(c1 == c2);
    }
  }
}

TEST_CASE("onednn gemm: the Mlp's bf16 forward and backward follow its fp32 ones") {
  if (SkipWithoutBf16()) return;
  ModelSpec spec;
  spec.num_slots = 4;
  spec.embedding_dim = 8;
  spec.num_dense = 3;
  spec.mlp = {32, 16};
  const Mlp mlp(spec);
  const int B = 64;
  std::vector<float> params(mlp.num_params());
  mlp.InitParams(3, params.data());
  const auto x = Random(4, static_cast<size_t>(B) * mlp.input_width());
  const auto c = Random(5, B);
  std::vector<float> logits[2], dparams[2], dinput[2];
  for (int p = 0; p < 2; ++p) {
    const DensePrecision precision = p == 0 ? DensePrecision::kFp32 : DensePrecision::kBf16;
    auto ws = mlp.MakeWorkspace(B);
    logits[p].resize(B);
    dparams[p].resize(params.size());
    dinput[p].resize(x.size());
    mlp.Forward(params.data(), x.data(), B, &ws, logits[p].data(), precision);
    mlp.Backward(params.data(), x.data(), B, c.data(), &ws, dparams[p].data(), dinput[p].data(), precision);
  }
  // bf16 keeps 8 bits of mantissa, so each operand is off by up to 2^-9 relative; over a
  // whole vector the difference stays within a few percent of its norm.
  auto close = [](const std::vector<float>& f32, const std::vector<float>& b16) {
    double norm = 0, err = 0;
    for (size_t k = 0; k < f32.size(); ++k) {
      norm += static_cast<double>(f32[k]) * f32[k];
      err += (static_cast<double>(f32[k]) - b16[k]) * (static_cast<double>(f32[k]) - b16[k]);
    }
    return norm > 0 && std::sqrt(err / norm) <= 0.05;
  };
  CHECK(close(logits[0], logits[1]));
  CHECK(close(dparams[0], dparams[1]));
  CHECK(close(dinput[0], dinput[1]));
  CHECK(logits[0] != logits[1]);  // the bf16 path was taken
}

// In bf16 the top hidden layer's gradient is made in one pass from the logit's gradient
// (never held in fp32): its bias gradient and its weight gradient, the product of the
// layer's bf16 input and that gradient's rounding, are those of the steps written out;
// for a top layer of `width` columns, split over two threads.
void CheckTopGradient(int width) {
  const Mlp mlp(29, {24, width}, Mlp::Output::kLogit);
  const int B = 48, top = 1, in = 24;
  std::vector<float> params(mlp.num_params());
  mlp.InitParams(11, params.data());
  const auto x = Random(12, static_cast<size_t>(B) * mlp.input_width());
  const auto c = Random(13, B);
  auto ws = mlp.MakeWorkspace(B, 2);
  std::vector<float> logits(B), dparams(params.size());
  mlp.Forward(params.data(), x.data(), B, &ws, logits.data(), DensePrecision::kBf16);
  mlp.Backward(params.data(), x.data(), B, c.data(), &ws, dparams.data(), nullptr, DensePrecision::kBf16);

  const float* a = ws.act[top].data();  // the top layer's output, which masks its gradient
  const float* w = params.data() + mlp.weight_offset(top + 1);
  std::vector<float> db(width, 0.0f);
  std::vector<uint16_t> g16(static_cast<size_t>(B) * width);
  for (int i = 0; i < B; ++i) {
    for (int j = 0; j < width; ++j) {
      const float v = a[i * width + j] > 0.0f ? c[i] * w[j] : 0.0f;
      db[j] += v;
      g16[i * width + j] = FloatToBf16(v);
    }
  }
  CHECK(std::vector<float>(dparams.begin() + mlp.bias_offset(top), dparams.begin() + mlp.bias_offset(top) + width) == db);
  std::vector<float> dw(static_cast<size_t>(in) * width);
  OnednnGemm gemm(2);
  gemm.Run(DensePrecision::kBf16, true, false, in, width, B, GemmOperand(nullptr, ws.input16[top].data()),
           GemmOperand(nullptr, g16.data()), false, dw.data());
  CHECK(std::vector<float>(dparams.begin() + mlp.weight_offset(top), dparams.begin() + mlp.bias_offset(top)) == dw);
}

TEST_CASE("onednn gemm: the Mlp's bf16 top gradient is the rounding of the masked outer product, bitwise") {
  if (SkipWithoutBf16()) return;
  CheckTopGradient(80);   // two parts of 40 columns
  CheckTopGradient(600);  // two parts of 300, each made 256 columns at a time
}

// The input written already rounded (RoundedInput) gives Forward's and Backward's bits in
// bf16, for one and for several hidden layers, and the input gradient as the roundings
// whose values Backward writes.
TEST_CASE("onednn gemm: the Mlp's rounded-input steps are its bf16 steps, bitwise") {
  if (SkipWithoutBf16()) return;
  for (const std::vector<int>& hidden : {std::vector<int>{24}, std::vector<int>{32, 16, 8}}) {
    CAPTURE(hidden.size());
    const Mlp mlp(29, hidden, Mlp::Output::kLogit);
    const int B = 48;
    std::vector<float> params(mlp.num_params());
    mlp.InitParams(7, params.data());
    const auto x = Random(8, static_cast<size_t>(B) * mlp.input_width());
    const auto c = Random(9, B);
    auto ws = mlp.MakeWorkspace(B, 2);
    std::vector<float> logits(B), dparams(params.size()), dinput(x.size());
    mlp.Forward(params.data(), x.data(), B, &ws, logits.data(), DensePrecision::kBf16);
    mlp.Backward(params.data(), x.data(), B, c.data(), &ws, dparams.data(), dinput.data(), DensePrecision::kBf16);

    auto rounded_ws = mlp.MakeWorkspace(B, 2);
    // Rows of 32 columns (29 rounded up to 16s), the last 3 left as RoundedInput made them.
    const int in = mlp.input_width(), stride = mlp.bf16_input_stride();
    REQUIRE(stride == 32);
    uint16_t* x16 = mlp.RoundedInput(&rounded_ws, B);
    for (int i = 0; i < B; ++i) {
      for (int k = 0; k < in; ++k) x16[i * stride + k] = FloatToBf16(x[i * in + k]);
    }
    std::vector<float> rounded_logits(B), rounded_dparams(params.size(), 5.0f);
    mlp.ForwardRounded(params.data(), B, &rounded_ws, rounded_logits.data());
    const uint16_t* d16 = mlp.BackwardRounded(params.data(), B, c.data(), &rounded_ws, rounded_dparams.data());
    CHECK(rounded_logits == logits);
    CHECK(rounded_dparams == dparams);
    std::vector<float> widened(x.size());
    for (int i = 0; i < B; ++i) {
      for (int k = 0; k < in; ++k) widened[i * in + k] = Bf16ToFloat(d16[i * stride + k]);
    }
    CHECK(widened == dinput);
  }
}

}  // namespace
}  // namespace strata
