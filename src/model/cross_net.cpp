// DCN-v2 cross layers (strata/model/cross_net.h): products through Gemm, the elementwise
// gating and residual as loops in row order.
#include "strata/model/cross_net.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "strata/common/partition.h"

namespace strata {
namespace {

// m (in, out) Xavier-uniform from a counter-based hash of (seed, index).
void XavierUniform(uint64_t seed, size_t first, int in, int out, float* m) {
  const float bound = std::sqrt(6.0f / static_cast<float>(in + out));
  const size_t n = static_cast<size_t>(in) * out;
  for (size_t k = 0; k < n; ++k) {
    const float u = static_cast<float>(Mix64(seed + first + k) >> 40) * 0x1.0p-24f;
    m[k] = bound * (2.0f * u - 1.0f);
  }
}

}  // namespace

CrossNet::CrossNet(int width, int layers, int rank) : width_(width), layers_(layers), rank_(rank) {
  assert(width >= 1 && layers >= 1 && rank >= 0);
}

void CrossNet::InitParams(uint64_t seed, float* params) const {
  const uint64_t base = Mix64(seed ^ 0x63726f73732d696eULL);  // "cross-in"
  for (int l = 0; l < layers_; ++l) {
    float* p = params + Offset(l);
    if (rank_ == 0) {
      XavierUniform(base, Offset(l), width_, width_, p);
    } else {
      XavierUniform(base, Offset(l), width_, rank_, p);
      const size_t u = static_cast<size_t>(width_) * rank_;
      XavierUniform(base, Offset(l) + u, rank_, width_, p + u);
    }
    std::fill(params + BiasOffset(l), params + Offset(l + 1), 0.0f);
  }
}

std::vector<ParamBlock> CrossNet::Blocks(size_t base) const {
  std::vector<ParamBlock> blocks;
  for (int l = 0; l < layers_; ++l) {
    const std::string prefix = "cross/" + std::to_string(l) + "/";
    if (rank_ == 0) {
      blocks.push_back({prefix + "weight", base + Offset(l), width_, width_});
    } else {
      blocks.push_back({prefix + "u", base + Offset(l), width_, rank_});
      blocks.push_back({prefix + "v", base + Offset(l) + static_cast<size_t>(width_) * rank_, rank_, width_});
    }
    blocks.push_back({prefix + "bias", base + BiasOffset(l), 0, width_});
  }
  return blocks;
}

CrossNet::Workspace CrossNet::MakeWorkspace(int max_batch) const {
  const size_t n = static_cast<size_t>(max_batch) * width_;
  Workspace ws;
  ws.x.assign(layers_, std::vector<float>(n));
  ws.y.assign(layers_, std::vector<float>(n));
  if (rank_ > 0) ws.t.assign(layers_, std::vector<float>(static_cast<size_t>(max_batch) * rank_));
  ws.dy.resize(n);
  ws.dx.resize(n);
  if (rank_ > 0) ws.dt.resize(static_cast<size_t>(max_batch) * rank_);
  return ws;
}

const float* CrossNet::Forward(DensePrecision precision, GemmContext* gemm, const float* params, const float* x0,
                               int B, Workspace* ws) const {
  for (int l = 0; l < layers_; ++l) {
    const float* x = LayerInput(x0, *ws, l);
    const float* p = params + Offset(l);
    float* y = ws->y[l].data();
    if (rank_ == 0) {
      Gemm(precision, gemm, false, false, B, width_, width_, x, p, false, y);
    } else {
      float* t = ws->t[l].data();
      Gemm(precision, gemm, false, false, B, rank_, width_, x, p, false, t);
      Gemm(precision, gemm, false, false, B, width_, rank_, t, p + static_cast<size_t>(width_) * rank_, false, y);
    }
    const float* b = params + BiasOffset(l);
    float* out = ws->x[l].data();
    for (int i = 0; i < B; ++i) {
      const size_t row = static_cast<size_t>(i) * width_;
      for (int j = 0; j < width_; ++j) {
        y[row + j] += b[j];
        out[row + j] = x0[row + j] * y[row + j] + x[row + j];
      }
    }
  }
  return ws->x[layers_ - 1].data();
}

void CrossNet::Backward(DensePrecision precision, GemmContext* gemm, const float* params, const float* x0, int B,
                        const float* dout, Workspace* ws, float* dparams, float* dx0) const {
  const size_t n = static_cast<size_t>(B) * width_;
  std::vector<float>& g = ws->dx;  // dLoss/dx_{l+1}, then dLoss/dx_l
  std::copy(dout, dout + n, g.begin());
  float* dy = ws->dy.data();
  for (int l = layers_ - 1; l >= 0; --l) {
    const float* x = LayerInput(x0, *ws, l);
    const float* y = ws->y[l].data();
    const float* p = params + Offset(l);
    float* dp = dparams + Offset(l);
    float* db = dparams + BiasOffset(l);
    std::fill(db, db + width_, 0.0f);
    for (int i = 0; i < B; ++i) {  // the bias gradient sums rows in row order
      const size_t row = static_cast<size_t>(i) * width_;
      for (int j = 0; j < width_; ++j) {
        dy[row + j] = g[row + j] * x0[row + j];
        dx0[row + j] += g[row + j] * y[row + j];
        db[j] += dy[row + j];
      }
    }
    // g (dLoss/dx_l) = g (the residual) + dy W^T.
    if (rank_ == 0) {
      Gemm(precision, gemm, true, false, width_, width_, B, x, dy, false, dp);
      Gemm(precision, gemm, false, true, B, width_, width_, dy, p, true, g.data());
    } else {
      const float* v = p + static_cast<size_t>(width_) * rank_;
      float* dt = ws->dt.data();
      Gemm(precision, gemm, true, false, rank_, width_, B, ws->t[l].data(), dy, false, dp + static_cast<size_t>(width_) * rank_);
      Gemm(precision, gemm, false, true, B, rank_, width_, dy, v, false, dt);
      Gemm(precision, gemm, true, false, width_, rank_, B, x, dt, false, dp);
      Gemm(precision, gemm, false, true, B, width_, rank_, dt, p, true, g.data());
    }
  }
  for (size_t k = 0; k < n; ++k) dx0[k] += g[k];  // x_0 is also layer 0's residual input
}

}  // namespace strata
