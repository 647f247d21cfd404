// Mlp: a dense tower on the host: input (B, width) -> hidden layers with ReLU -> one logit
// (Output::kLogit: the CTR tower, whose input is the pooled slots, slot-major, then the
// dense features, or a model's interaction; strata/model/dense_model.h), or ReLU layers only
// (Output::kRelu: DLRM's bottom MLP). The matrix products go through Gemm
// (strata/model/gemm.h, oneDNN's matmul): fp32, or, when a call asks for
// DensePrecision::kBf16, bf16 operands with fp32 accumulation; the parameters, activations,
// gradients and the output layer's dot products (CBLAS) stay fp32 either way. A hidden
// layer's bias add and ReLU are fused into its forward product; ReLU masks and the
// bias-gradient column sums backward are loops. Every row of a batch is computed independently of
// the others (its output and its input gradient do not depend on the batch's other rows);
// only the parameter gradients sum over the batch, in row order.
//
// Parameter layout: one flat float vector, layer by layer (hidden layers, then the output
// layer of width 1 for kLogit); layer l with fan-in `in` and fan-out `out` is
//   W_l: (in, out) floats, row-major   (so forward is X(B,in) * W(in,out), no transpose)
//   b_l: (out) floats
// at weight_offset(l) and bias_offset(l). Checkpoints and the CUDA backend use this layout.
//
// Thread safety: an Mlp is immutable after construction and may be shared by threads; a
// Workspace belongs to one caller at a time. The products use oneDNN's OpenMP threads (the
// Workspace's GemmContext::threads); concurrent callers each need their own Workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/common/huge_pages.h"
#include "strata/model/gemm.h"
#include "strata/model/model_spec.h"

namespace strata {

class Mlp {
 public:
  // kLogit: hidden ReLU layers, then one linear logit (the CTR tower). kRelu: ReLU layers
  // only, the last one's output (B, its width) is the result (DLRM's bottom MLP).
  enum class Output { kLogit, kRelu };

  // The CTR tower of spec: input spec.mlp_input_width(), hidden spec.mlp, a logit.
  // REQUIRES: spec.mlp_input_width() >= 1 and every hidden width >= 1.
  explicit Mlp(const ModelSpec& spec);
  // REQUIRES: input_width >= 1, every width >= 1, and at least one for kRelu.
  Mlp(int input_width, const std::vector<int>& hidden, Output output);

  int input_width() const { return widths_.front(); }
  // kBf16's row stride of the first layer's input and of its input gradient (RoundedInput,
  // BackwardRounded, Workspace::input16[0]): input_width rounded up to whole 16 columns, the
  // columns past the width zero. oneDNN's bf16 products run whole blocks of 16 faster than a
  // ragged edge: the first layer's weight gradient, whose rows these columns are, took 5-12%
  // longer at 429 rows than at 432 (11-17% when the machine was busy).
  int bf16_input_stride() const { return (input_width() + 15) / 16 * 16; }
  // 1 for kLogit; the last layer's width for kRelu.
  int output_width() const { return widths_.back(); }
  // Hidden layers plus the output layer (kLogit), or the ReLU layers (kRelu).
  int num_layers() const { return static_cast<int>(widths_.size()) - 1; }
  // Layers followed by a ReLU: all but the logit.
  int relu_layers() const { return output_ == Output::kLogit ? num_layers() - 1 : num_layers(); }
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

  // Activations and gradient scratch for batches of up to max_batch rows. MakeWorkspace
  // sizes every buffer a step in `precision` writes and backs its pages then (in huge pages
  // where large: oneDNN walks these buffers row by row, and 4 KiB pages cost it TLB misses),
  // so that no step faults a page in or grows a buffer.
  struct Workspace {
    int max_batch = 0;
    // hidden layer l: (max_batch, fan_out(l)), post-ReLU; for kBf16 only the last hidden
    // layer's (the others' outputs are kept as the next layer's input16 alone, so their
    // fp32 buffers stay empty)
    std::vector<HugeVector<float>> act;
    HugeVector<float> grad_a;             // (max_batch, widest hidden) gradient ping
    HugeVector<float> grad_b;             // the pong, as grad_a; kFp32's Backward alone uses it
    GemmContext gemm;                     // the products' threads and bf16 buffers
    // kBf16 only: the roundings that several products read, each made once: each hidden
    // layer's input and weights, rounded by Forward and read again by Backward, and the
    // gradient Backward feeds two products. A hidden layer's input after the first is
    // written by the previous layer's product.
    // hidden layer l's input (B, bf16_fan_in(l)) and weights (bf16_fan_in(l), fan_out(l)),
    // the first layer's padded to bf16_input_stride with zero columns and zero rows
    std::vector<HugeVector<uint16_t>> input16;
    std::vector<HugeVector<uint16_t>> weights16;
    HugeVector<float> first_weight_grad;          // the first layer's, over its padded rows
    HugeVector<uint16_t> grad16;                  // (B, fan_out(l)) of the layer at hand
    HugeVector<uint16_t> grad16_pong;             // the layer below's, as its product writes it
  };
  Workspace MakeWorkspace(int max_batch, int threads = 1, DensePrecision precision = DensePrecision::kFp32) const;

  // out = MLP(input (B, input_width) row-major): logits (B), or (B, output_width) for kRelu.
  // REQUIRES: 1 <= B <= ws->max_batch.
  // Keeps the activations in *ws for a following Backward on the same input. kBf16
  // REQUIRES OnednnGemm::Bf16Supported().
  void Forward(const float* params, const float* input, int B, Workspace* ws, float* out,
               DensePrecision precision = DensePrecision::kFp32) const;

  // Given dout = dLoss/dout (as Forward's out), writes dparams (num_params, overwritten) and
  // dinput (B, input_width, overwritten). REQUIRES: the last Forward on *ws was with the
  // same params, input, B and precision. dinput may be null when the caller needs no input
  // gradient.
  void Backward(const float* params, const float* input, int B, const float* dout,
                Workspace* ws, float* dparams, float* dinput,
                DensePrecision precision = DensePrecision::kFp32) const;

  // kBf16 on an input the caller writes already rounded, so that it is never held in fp32:
  // the caller writes the bf16 input (B, input_width) into RoundedInput's rows of
  // bf16_input_stride (leaving the columns past the width as they are), then ForwardRounded
  // and BackwardRounded compute what Forward and Backward in kBf16 would on its values,
  // bitwise, and BackwardRounded returns the input gradient as the bf16 roundings its
  // product wrote, in rows of bf16_input_stride (Backward's dinput holds their values),
  // valid until the next call on ws.
  // REQUIRES: kLogit with at least one hidden layer; OnednnGemm::Bf16Supported().
  uint16_t* RoundedInput(Workspace* ws, int B) const;
  void ForwardRounded(const float* params, int B, Workspace* ws, float* out) const;
  const uint16_t* BackwardRounded(const float* params, int B, const float* dout, Workspace* ws,
                                  float* dparams) const;

 private:
  // Layer l's input columns in kBf16's buffers: bf16_input_stride for the first, else fan_in.
  int bf16_fan_in(int l) const { return l == 0 ? bf16_input_stride() : fan_in(l); }
  // RoundedInput written with the roundings of input (B, input_width); returns it.
  const uint16_t* RoundedInputOf(const float* input, int B, Workspace* ws) const;
  // Forward, its first layer reading ws->input16[0] as written when rounded_input (kBf16).
  void ForwardFrom(const float* params, const float* input, bool rounded_input, int B, Workspace* ws, float* out,
                   DensePrecision precision) const;
  // Backward's top: the output layer's gradients (kLogit) and dLoss/d(the top ReLU layer's
  // pre-activation), masked and with its bias gradient written, in ws->grad_a; returns it, or
  // null when there is no ReLU layer (dinput, when asked for, then written).
  float* TopBackward(const float* params, const float* input, int B, const float* dout, Workspace* ws,
                     float* dparams, float* dinput) const;
  // kLogit: the output layer's weight and bias gradients from its input a (B, fan_in).
  void OutputLayerGrads(const float* a, int B, const float* dout, float* dparams) const;
  // TopBackward for kBf16: its gradient's bf16 rounding in ws->grad16 (for kLogit made in
  // one pass, never held in fp32); false when there is no ReLU layer.
  bool TopBackwardBf16(const float* params, const float* input, int B, const float* dout, Workspace* ws,
                       float* dparams, float* dinput) const;
  // Backward's ReLU layers top-down: fp32 from dz (TopBackward's), or kBf16 from ws->grad16
  // (TopBackwardBf16's) with each input gradient written in bf16 by its product and fed to
  // the next products as it is; kBf16 returns the first layer's (when input_grad) in ws's
  // buffers.
  void BackwardReluLayers(const float* params, const float* input, int B, float* dz, Workspace* ws,
                          float* dparams, float* dinput) const;
  const uint16_t* BackwardReluLayersBf16(int B, Workspace* ws, float* dparams, bool input_grad) const;

  Output output_ = Output::kLogit;
  std::vector<int> widths_;      // input, hidden..., then 1 for kLogit
  std::vector<size_t> offsets_;  // weight_offset per layer, then num_params
};

// Sigmoid cross-entropy of a batch: returns the sum over i of the log loss of logits[i]
// against labels[i] (0 or 1), summed in double in row order, and writes
// dlogits[i] = (sigmoid(logits[i]) - labels[i]) * scale. dlogits may alias logits.
double LossAndGrad(const float* logits, const float* labels, int B, float scale,
                   float* dlogits);

}  // namespace strata
