// CrossNet: DCN-v2's cross layers (Wang et al., "DCN V2", 2021) over the MLP input x0 of
// `width` columns, for --model dcn:
//   x_{l+1} = x0 * (x_l W_l + b_l) + x_l          (elementwise *, full rank: W_l width x width)
//   x_{l+1} = x0 * ((x_l U_l) V_l + b_l) + x_l    (low rank r: U_l width x r, V_l r x width)
// Its output x_L feeds the MLP. Every row is computed independently of the others; the
// parameter gradients sum over the batch inside the products (strata/model/gemm.h).
//
// Parameter layout, layer by layer at offset(l): full rank W (width, width) then b (width);
// low rank U (width, rank), V (rank, width), then b (width); row-major, so a product is
// X (B, in) * M (in, out) with no transpose.
//
// Thread safety: immutable after construction; a Workspace belongs to one caller at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/model/gemm.h"

namespace strata {

// A named tensor of the dense parameters, for checkpoints (/dense/<name>) and readers.
struct ParamBlock {
  std::string name;  // "layers/0/weight", "cross/1/bias", ...
  size_t offset = 0;
  int rows = 0;      // 0 for a vector
  int cols = 0;
};

class CrossNet {
 public:
  // REQUIRES: width >= 1, layers >= 1, rank >= 0 (0: full rank).
  CrossNet(int width, int layers, int rank);

  int width() const { return width_; }
  int num_layers() const { return layers_; }
  int rank() const { return rank_; }  // 0: full rank
  // Where layer l's parameters and its bias start (the layout above).
  size_t Offset(int l) const { return static_cast<size_t>(l) * LayerParams(); }
  size_t BiasOffset(int l) const { return Offset(l + 1) - static_cast<size_t>(width_); }
  size_t num_params() const { return static_cast<size_t>(layers_) * LayerParams(); }

  // Matrices Xavier-uniform U(-sqrt(6/(in+out)), +), biases 0, each a pure function of
  // (seed, its index).
  void InitParams(uint64_t seed, float* params) const;
  // The tensors at `base` in the dense parameters, named cross/<l>/{weight|u,v,bias}.
  std::vector<ParamBlock> Blocks(size_t base) const;

  struct Workspace {
    std::vector<std::vector<float>> x;  // x_1 .. x_L: (max_batch, width)
    std::vector<std::vector<float>> y;  // x_l W_l + b_l per layer: (max_batch, width)
    std::vector<std::vector<float>> t;  // low rank: x_l U_l per layer (max_batch, rank)
    std::vector<float> dy, dt, dx;      // gradient scratch
  };
  Workspace MakeWorkspace(int max_batch) const;

  // The last layer's output x_L (B, width), kept in *ws for Backward.
  const float* Forward(DensePrecision precision, GemmContext* gemm, const float* params, const float* x0, int B,
                       Workspace* ws) const;
  // Given dout = dLoss/dx_L (B, width), writes dparams (num_params, overwritten) and adds the
  // gradient of x0 to dx0 (B, width). REQUIRES: the last Forward on *ws had these inputs.
  void Backward(DensePrecision precision, GemmContext* gemm, const float* params, const float* x0, int B,
                const float* dout, Workspace* ws, float* dparams, float* dx0) const;

 private:
  size_t LayerParams() const {
    const size_t w = static_cast<size_t>(width_);
    return (rank_ == 0 ? w * w : 2 * w * static_cast<size_t>(rank_)) + w;
  }
  const float* LayerInput(const float* x0, const Workspace& ws, int l) const { return l == 0 ? x0 : ws.x[l - 1].data(); }

  int width_, layers_, rank_;
};

}  // namespace strata
