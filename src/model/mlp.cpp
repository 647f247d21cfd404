// Mlp on the host: oneDNN products (strata/model/gemm.h), each hidden layer's forward one
// product with its bias and ReLU fused, plus fused elementwise passes backward (ReLU mask
// with bias-gradient sum; in bf16 also the top layer's gradient, made from the logit's and
// rounded in the same pass) and, in bf16, the operands' roundings, split over the products'
// OpenMP team (compiled with -fopenmp); CBLAS dot products for the width-1 logit. The products are
// ordered so that each GEMM reads and writes row-major buffers without copies; see mlp.h
// for the parameter layout.
#include "strata/model/mlp.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "model/bf16_rounding.h"
#include "model/omp_parts.h"
#include "strata/common/half.h"
#include "strata/common/partition.h"
#include "strata/model/gemm.h"
#include "strata/model/update_kernels.h"
#include "strata/model/update_math.h"

namespace strata {

namespace {

// One row's columns of ReluMaskAndBiasGrad, in the CPU's vector kernel: d[j] = (a[j] > 0 ?
// d[j] : 0), db[j] += d[j], in fp32 or on bf16 roundings.
void MaskRow(const float* a, float* d, float* db, size_t n) { Kernels().relu_mask(a, d, db, n); }
void MaskRow(const uint16_t* a, uint16_t* d, float* db, size_t n) { Kernels().relu_mask_bf16(a, d, db, n); }

// d (B, n) *= (a > 0), and db (n) = column sums of the masked d, summed in row order; the
// columns split over `threads`. a and d both in fp32 or both as bf16 roundings.
template <typename T>
void ReluMaskAndBiasGrad(const T* a, T* d, int B, int n, float* db, int threads) {
  InParts(threads, static_cast<size_t>(n), 64, [&](size_t begin, size_t end) {
    std::fill(db + begin, db + end, 0.0f);
    for (int i = 0; i < B; ++i) {
      const size_t row = static_cast<size_t>(i) * n + begin;
      MaskRow(a + row, d + row, db + begin, end - begin);
    }
  });
}

// to (B, n) = the values of the bf16 roundings `from` (B, stride), the rows split over
// `threads`.
void WidenRows(const uint16_t* __restrict from, int B, int n, int stride, float* __restrict to, int threads) {
  InParts(threads, static_cast<size_t>(B), 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      for (int k = 0; k < n; ++k) to[i * n + k] = Bf16ToFloat(from[i * stride + k]);
    }
  });
}

// to (B, stride) = the bf16 roundings of x (B, n) in its first n columns (the others left
// as they are), the rows split over `threads`.
void RoundRows(const float* x, int B, int n, int stride, uint16_t* to, int threads) {
  const auto to_bf16 = Kernels().to_bf16;
  InParts(threads, static_cast<size_t>(B), 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) to_bf16(to + i * stride, x + i * n, static_cast<size_t>(n));
  });
}

// out (B, n) = d (B) w (n)^T: a rank-1 product, elementwise (no sums to order); its rows
// split over `threads`.
void OuterProduct(const float* __restrict d, const float* __restrict w, int B, int n, float* __restrict out,
                  int threads) {
  InParts(threads, static_cast<size_t>(B), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float* row = out + i * n;
      for (int j = 0; j < n; ++j) row[j] = d[i] * w[j];
    }
  });
}

// g (B, n) = the bf16 roundings of d (B) w (n)^T masked by a (B, n) > 0, and db (n) = the
// masked product's column sums in row order: OuterProduct, ReluMaskAndBiasGrad and
// RoundToBf16 in one pass, with their bits; the columns split over `threads`.
void MaskedOuterProductToBf16(const float* d, const float* w, const float* a, int B, int n, float* db, uint16_t* g,
                              int threads) {
  constexpr size_t kBlock = 256;  // columns a row's product is held for, on the stack
  InParts(threads, static_cast<size_t>(n), 64, [&](size_t begin, size_t end) {
    std::fill(db + begin, db + end, 0.0f);
    for (size_t block = begin; block < end; block += kBlock) {
      const size_t width = std::min(kBlock, end - block);
      float row[kBlock];  // a row's block, in the L1 cache
      for (int i = 0; i < B; ++i) {
        const size_t at = static_cast<size_t>(i) * n + block;
        for (size_t j = 0; j < width; ++j) row[j] = d[i] * w[block + j];
        MaskRow(a + at, row, db + block, width);
        Kernels().to_bf16(g + at, row, width);
      }
    }
  });
}

// *v grown to at least n values, never shrunk (MakeWorkspace made it that size, or, for a
// batch larger than the workspace's, the first call that needs it does).
template <typename T>
T* Grown(HugeVector<T>* v, size_t n) {
  if (v->size() < n) v->resize(n);
  return v->data();
}

// x (n floats) as a product's operand: for kBf16 with its rounding, made in *to (grown as
// needed) on `threads` for the products that read it again.
GemmOperand Rounded(DensePrecision precision, const float* x, size_t n, HugeVector<uint16_t>* to, int threads) {
  if (precision == DensePrecision::kFp32) return x;
  return GemmOperand(x, RoundToBf16(x, n, to, threads));
}

}  // namespace

Mlp::Mlp(const ModelSpec& spec) : Mlp(spec.mlp_input_width(), spec.mlp, Output::kLogit) {}

Mlp::Mlp(int input_width, const std::vector<int>& hidden, Output output) : output_(output) {
  assert(input_width >= 1 && (output == Output::kLogit || !hidden.empty()));
  widths_.push_back(input_width);
  for (int w : hidden) {
    assert(w >= 1);
    widths_.push_back(w);
  }
  if (output == Output::kLogit) widths_.push_back(1);
  offsets_.push_back(0);
  for (int l = 0; l < num_layers(); ++l) {
    offsets_.push_back(offsets_.back() + (static_cast<size_t>(fan_in(l)) + 1) * static_cast<size_t>(fan_out(l)));
  }
}

double Mlp::flops_per_example() const {
  double macs = 0;
  for (int l = 0; l < num_layers(); ++l) macs += static_cast<double>(fan_in(l)) * fan_out(l);
  return 2.0 * 3.0 * macs;  // forward, weight gradient, input gradient
}

void Mlp::InitParams(uint64_t seed, float* params) const {
  const uint64_t base = Mix64(seed ^ 0x6d6c702d696e6974ULL);  // "mlp-init"
  for (int l = 0; l < num_layers(); ++l) {
    const float bound = std::sqrt(6.0f / static_cast<float>(fan_in(l)));
    const size_t begin = weight_offset(l);
    const size_t end = bias_offset(l);
    for (size_t k = begin; k < end; ++k) {
      // 24 random bits -> u in [0, 1) -> U(-bound, bound).
      float u = static_cast<float>(Mix64(base + k) >> 40) * 0x1.0p-24f;
      params[k] = bound * (2.0f * u - 1.0f);
    }
    std::fill(params + end, params + end + fan_out(l), 0.0f);
  }
}

Mlp::Workspace Mlp::MakeWorkspace(int max_batch, int threads, DensePrecision precision) const {
  assert(max_batch >= 1);
  Workspace ws;
  ws.max_batch = max_batch;
  ws.gemm.threads = threads;
  const size_t B = static_cast<size_t>(max_batch);
  int widest = 1;
  for (int l = 0; l < relu_layers(); ++l) widest = std::max(widest, fan_out(l));
  ws.grad_a.resize(B * widest);
  ws.act.resize(relu_layers());
  ws.input16.resize(relu_layers());
  ws.weights16.resize(relu_layers());
  if (precision == DensePrecision::kFp32) {
    for (int l = 0; l < relu_layers(); ++l) Grown(&ws.act[l], B * fan_out(l));
    Grown(&ws.grad_b, ws.grad_a.size());
    return ws;
  }
  if (relu_layers() == 0) return ws;
  Grown(&ws.act[relu_layers() - 1], B * fan_out(relu_layers() - 1));
  for (int l = 0; l < relu_layers(); ++l) {
    Grown(&ws.input16[l], B * bf16_fan_in(l));
    Grown(&ws.weights16[l], static_cast<size_t>(bf16_fan_in(l)) * fan_out(l));
  }
  if (bf16_input_stride() != input_width()) {
    Grown(&ws.first_weight_grad, static_cast<size_t>(bf16_input_stride()) * fan_out(0));
  }
  // The gradient ping-pong: a hidden layer's output gradient, or its input's.
  const size_t gradient = B * std::max(widest, bf16_input_stride());
  Grown(&ws.grad16, gradient);
  Grown(&ws.grad16_pong, gradient);
  return ws;
}

void Mlp::Forward(const float* params, const float* input, int B, Workspace* ws, float* out,
                  DensePrecision precision) const {
  ForwardFrom(params, input, false, B, ws, out, precision);
}

uint16_t* Mlp::RoundedInput(Workspace* ws, int B) const {
  assert(B >= 1 && B <= ws->max_batch);
  return Grown(&ws->input16[0], static_cast<size_t>(B) * bf16_input_stride());
}

const uint16_t* Mlp::RoundedInputOf(const float* input, int B, Workspace* ws) const {
  uint16_t* x16 = RoundedInput(ws, B);
  RoundRows(input, B, input_width(), bf16_input_stride(), x16, ws->gemm.threads);
  return x16;
}

void Mlp::ForwardRounded(const float* params, int B, Workspace* ws, float* out) const {
  assert(output_ == Output::kLogit && relu_layers() >= 1);
  ForwardFrom(params, nullptr, true, B, ws, out, DensePrecision::kBf16);
}

void Mlp::ForwardFrom(const float* params, const float* input, bool rounded_input, int B, Workspace* ws, float* out,
                      DensePrecision precision) const {
  assert(B >= 1 && B <= ws->max_batch);
  const bool bf16 = precision == DensePrecision::kBf16;
  const float* a = input;
  for (int l = 0; l < relu_layers(); ++l) {
    const int in = bf16 ? bf16_fan_in(l) : fan_in(l), width = fan_out(l);
    // kBf16: a hidden layer's input after the first is the rounding its product wrote, and
    // the first layer's one the caller wrote when rounded_input; else it is rounded here.
    const bool written = bf16 && (l > 0 || rounded_input);
    const GemmOperand x = !bf16 ? GemmOperand(a)
                                : GemmOperand(nullptr, written ? ws->input16[l].data() : RoundedInputOf(a, B, ws));
    // A padded layer's weights past its fan-in are rows of zeros (grown, never written);
    // the rounding below grows any other layer's as it needs.
    if (bf16 && in != fan_in(l)) Grown(&ws->weights16[l], static_cast<size_t>(in) * width);
    const GemmOperand w = Rounded(precision, params + weight_offset(l), static_cast<size_t>(fan_in(l)) * width,
                                  &ws->weights16[l], ws->gemm.threads);
    if (bf16 && l + 1 < relu_layers()) {  // read by the next layer's products alone
      uint16_t* next = Grown(&ws->input16[l + 1], static_cast<size_t>(B) * width);
      GemmBiasReluToBf16(&ws->gemm, B, width, in, x, w, params + bias_offset(l), next);
      continue;
    }
    float* h = Grown(&ws->act[l], static_cast<size_t>(ws->max_batch) * width);
    GemmBiasRelu(precision, &ws->gemm, B, width, in, x, w, params + bias_offset(l), h);
    a = h;
  }
  if (output_ == Output::kRelu) {
    std::memcpy(out, a, static_cast<size_t>(B) * output_width() * sizeof(float));
    return;
  }
  // Output layer (width 1): logits_i = a_i . w + b, one dot product per row, the rows split
  // over the threads. sgemv would be no faster here and sums rows in an order that depends
  // on B.
  const int last = num_layers() - 1;
  const int in = fan_in(last);
  const float* w = params + weight_offset(last);
  const float b = params[bias_offset(last)];
  InParts(ws->gemm.threads, static_cast<size_t>(B), 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = cblas_sdot(in, a + i * in, 1, w, 1) + b;
  });
}

void Mlp::Backward(const float* params, const float* input, int B, const float* dout,
                   Workspace* ws, float* dparams, float* dinput, DensePrecision precision) const {
  if (precision == DensePrecision::kFp32) {
    float* dz = TopBackward(params, input, B, dout, ws, dparams, dinput);
    if (dz != nullptr) BackwardReluLayers(params, input, B, dz, ws, dparams, dinput);
    return;
  }
  if (!TopBackwardBf16(params, input, B, dout, ws, dparams, dinput)) return;
  const uint16_t* d16 = BackwardReluLayersBf16(B, ws, dparams, dinput != nullptr);
  if (d16 != nullptr) WidenRows(d16, B, input_width(), bf16_input_stride(), dinput, ws->gemm.threads);
}

const uint16_t* Mlp::BackwardRounded(const float* params, int B, const float* dout, Workspace* ws,
                                     float* dparams) const {
  assert(output_ == Output::kLogit && relu_layers() >= 1);
  TopBackwardBf16(params, nullptr, B, dout, ws, dparams, nullptr);
  return BackwardReluLayersBf16(B, ws, dparams, true);
}

float* Mlp::TopBackward(const float* params, const float* input, int B, const float* dout, Workspace* ws,
                        float* dparams, float* dinput) const {
  assert(B >= 1 && B <= ws->max_batch);
  const int last = num_layers() - 1;
  float* dz = ws->grad_a.data();
  if (output_ == Output::kRelu) {
    // dout is dLoss/d(the last ReLU's output): mask it into that layer's pre-activation.
    std::memcpy(dz, dout, static_cast<size_t>(B) * output_width() * sizeof(float));
    ReluMaskAndBiasGrad(ws->act[last].data(), dz, B, fan_out(last), dparams + bias_offset(last), ws->gemm.threads);
    return dz;
  }
  // Output layer: dW and db (OutputLayerGrads), da = dlogits w^T.
  const int in = fan_in(last);
  OutputLayerGrads(last == 0 ? input : ws->act[last - 1].data(), B, dout, dparams);
  if (last == 0) {  // no hidden layers: the input gradient is the rank-1 product itself
    if (dinput != nullptr) OuterProduct(dout, params + weight_offset(0), B, in, dinput, ws->gemm.threads);
    return nullptr;
  }
  // Gradient w.r.t. the last hidden activation, masked by its ReLU, with its bias gradient.
  OuterProduct(dout, params + weight_offset(last), B, in, dz, ws->gemm.threads);
  ReluMaskAndBiasGrad(ws->act[last - 1].data(), dz, B, in, dparams + bias_offset(last - 1), ws->gemm.threads);
  return dz;
}

void Mlp::OutputLayerGrads(const float* a, int B, const float* dout, float* dparams) const {
  const int last = num_layers() - 1, in = fan_in(last);
  cblas_sgemv(CblasRowMajor, CblasTrans, B, in, 1.0f, a, in, dout, 1, 0.0f, dparams + weight_offset(last), 1);
  float db = 0.0f;
  for (int i = 0; i < B; ++i) db += dout[i];
  dparams[bias_offset(last)] = db;
}

bool Mlp::TopBackwardBf16(const float* params, const float* input, int B, const float* dout, Workspace* ws,
                          float* dparams, float* dinput) const {
  const int last = num_layers() - 1;
  if (output_ == Output::kRelu || last == 0) {
    const float* dz = TopBackward(params, input, B, dout, ws, dparams, dinput);
    if (dz == nullptr) return false;
    RoundToBf16(dz, static_cast<size_t>(B) * fan_out(relu_layers() - 1), &ws->grad16, ws->gemm.threads);
    return true;
  }
  const int in = fan_in(last);
  const float* a = ws->act[last - 1].data();
  OutputLayerGrads(a, B, dout, dparams);
  MaskedOuterProductToBf16(dout, params + weight_offset(last), a, B, in, dparams + bias_offset(last - 1),
                           Grown(&ws->grad16, static_cast<size_t>(B) * in), ws->gemm.threads);
  return true;
}

void Mlp::BackwardReluLayers(const float* params, const float* input, int B, float* dz, Workspace* ws,
                             float* dparams, float* dinput) const {
  const DensePrecision fp32 = DensePrecision::kFp32;
  float* spare = Grown(&ws->grad_b, ws->grad_a.size());  // dz is grad_a
  for (int l = relu_layers() - 1; l >= 0; --l) {
    const int in = fan_in(l), width = fan_out(l);
    const float* a = l == 0 ? input : ws->act[l - 1].data();
    const float* w = params + weight_offset(l);
    Gemm(fp32, &ws->gemm, true, false, in, width, B, a, dz, false, dparams + weight_offset(l));
    float* da = l == 0 ? dinput : spare;
    if (da == nullptr) return;
    Gemm(fp32, &ws->gemm, false, true, B, in, width, dz, w, false, da);
    if (l == 0) return;
    ReluMaskAndBiasGrad(a, da, B, in, dparams + bias_offset(l - 1), ws->gemm.threads);
    std::swap(dz, spare);
  }
}

const uint16_t* Mlp::BackwardReluLayersBf16(int B, Workspace* ws, float* dparams, bool input_grad) const {
  const int threads = ws->gemm.threads, top = relu_layers() - 1;
  HugeVector<uint16_t>* g = &ws->grad16;
  HugeVector<uint16_t>* below = &ws->grad16_pong;
  for (int l = top; l >= 0; --l) {
    const int in = bf16_fan_in(l), width = fan_out(l);
    const GemmOperand x(nullptr, ws->input16[l].data()), w(nullptr, ws->weights16[l].data()), dout(nullptr, g->data());
    // A padded layer's weight gradient is made over all its rows in the workspace, and the
    // padding's rows are dropped.
    const bool padded = in != fan_in(l);
    float* dw = padded ? Grown(&ws->first_weight_grad, static_cast<size_t>(in) * width) : dparams + weight_offset(l);
    Gemm(DensePrecision::kBf16, &ws->gemm, true, false, in, width, B, x, dout, false, dw);
    if (padded) std::memcpy(dparams + weight_offset(l), dw, static_cast<size_t>(fan_in(l)) * width * sizeof(float));
    if (l == 0 && !input_grad) return nullptr;
    uint16_t* din = Grown(below, static_cast<size_t>(B) * in);
    GemmToBf16(&ws->gemm, false, true, B, in, width, dout, w, din);
    if (l == 0) return din;
    ReluMaskAndBiasGrad(ws->input16[l].data(), din, B, in, dparams + bias_offset(l - 1), threads);
    std::swap(g, below);
  }
  return nullptr;  // no ReLU layers
}

double LossAndGrad(const float* logits, const float* labels, int B, float scale,
                   float* dlogits) {
  double sum = 0.0;
  for (int i = 0; i < B; ++i) {
    const float z = logits[i];
    sum += LogitLogLoss(z, labels[i]);
    dlogits[i] = LogitLogLossGrad(z, labels[i], scale);
  }
  return sum;
}

}  // namespace strata
