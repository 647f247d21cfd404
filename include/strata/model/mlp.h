// Mlp: the dense tower of the CTR model on the host: input (the sum-pooled embeddings of
// all slots, slot-major, then the dense features) -> hidden layers with ReLU -> one logit.
// The matrix products go through Gemm (strata/model/gemm.h): CBLAS in fp32, or, when a
// call asks for DensePrecision::kBf16, bf16 operands with fp32 accumulation; the parameters, activations, gradients and the output
// layer's dot products stay fp32 either way. Bias adds, ReLU masks and the bias-gradient
// column sums are loops. Every row of a batch is computed independently of
// the others (its logit and its input gradient do not depend on the batch's other rows);
// only the parameter gradients sum over the batch, in row order.
//
// Parameter layout: one flat float vector, layer by layer (hidden layers, then the output
// layer of width 1); layer l with fan-in `in` and fan-out `out` is
//   W_l: (in, out) floats, row-major   (so forward is X(B,in) * W(in,out), no transpose)
//   b_l: (out) floats
// at weight_offset(l) and bias_offset(l). Checkpoints and the CUDA backend use this layout.
//
// Thread safety: an Mlp is immutable after construction and may be shared by threads; a
// Workspace belongs to one caller at a time. The BLAS calls use OpenBLAS's own threads
// (set with openblas_set_num_threads); concurrent callers each need their own Workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/model/gemm.h"
#include "strata/model/model_spec.h"

namespace strata {

class Mlp {
 public:
  // REQUIRES: spec.mlp_input_width() >= 1 and every hidden width >= 1.
  explicit Mlp(const ModelSpec& spec);

  int input_width() const { return widths_.front(); }
  // Hidden layers plus the output layer.
  int num_layers() const { return static_cast<int>(widths_.size()) - 1; }
  int fan_in(int layer) const { return widths_[layer]; }
  int fan_out(int layer) const { return widths_[layer + 1]; }
  size_t weight_offset(int layer) const { return offsets_[layer]; }
  size_t bias_offset(int layer) const {
    return offsets_[layer] + static_cast<size_t>(fan_in(layer)) * fan_out(layer);
  }
  size_t num_params() const { return offsets_.back(); }

  // Forward and backward multiply-adds x2 per example (forward, weight gradients, input
  // gradients), for benchmarks that compare against the machine's GEMM rate.
  double flops_per_example() const;

  // Writes num_params() floats: weights He-uniform U(-sqrt(6/in), sqrt(6/in)), biases 0,
  // each weight a pure function of (seed, its index) through a counter-based hash.
  void InitParams(uint64_t seed, float* params) const;

  // Activations and gradient scratch for batches of up to max_batch rows.
  struct Workspace {
    int max_batch = 0;
    std::vector<std::vector<float>> act;   // hidden layer l: (max_batch, fan_out(l)), post-ReLU
    std::vector<float> grad_a;             // (max_batch, widest hidden) gradient ping
    std::vector<float> grad_b;             // (max_batch, widest hidden) gradient pong
    GemmContext gemm;                      // the products' threads and bf16 buffers
  };
  Workspace MakeWorkspace(int max_batch, int threads = 1) const;

  // logits(B) = MLP(input (B, input_width) row-major). REQUIRES: 1 <= B <= ws->max_batch.
  // Keeps the activations in *ws for a following Backward on the same input. kBf16
  // REQUIRES Bf16Gemm::Supported().
  void Forward(const float* params, const float* input, int B, Workspace* ws, float* logits,
               DensePrecision precision = DensePrecision::kFp32) const;

  // Given dlogits (B) = dLoss/dlogit, writes dparams (num_params, overwritten) and
  // dinput (B, input_width, overwritten). REQUIRES: the last Forward on *ws was with the
  // same params, input, B and precision. dinput may be null when the caller needs no input
  // gradient.
  void Backward(const float* params, const float* input, int B, const float* dlogits,
                Workspace* ws, float* dparams, float* dinput,
                DensePrecision precision = DensePrecision::kFp32) const;

 private:
  std::vector<int> widths_;      // input, hidden..., 1
  std::vector<size_t> offsets_;  // weight_offset per layer, then num_params
};

// Sigmoid cross-entropy of a batch: returns the sum over i of the log loss of logits[i]
// against labels[i] (0 or 1), summed in double in row order, and writes
// dlogits[i] = (sigmoid(logits[i]) - labels[i]) * scale. dlogits may alias logits.
double LossAndGrad(const float* logits, const float* labels, int B, float scale,
                   float* dlogits);

}  // namespace strata
