// DenseModel: everything of a --model above the pooled embeddings, on the host: the MLP
// (strata/model/mlp.h) and what the model adds to it, behind one parameter vector.
//   dnn:    logit = MLP(x)
//   deepfm: logit = MLP(x) + FM(embeddings of x)          (strata/model/fm.h)
//   dcn:    logit = MLP(CrossNet(x))                       (strata/model/cross_net.h)
//   dlrm:   logit = MLP(DotInteraction(embeddings, Bottom(dense features)))
//                                                          (strata/model/dot_interaction.h)
//   wdl:    logit = MLP(x without the wide weights) + sum over slots of the pooled wide weight
// where x is an input row (the pooled slots, slot-major, then the dense features; a slot's
// pooled row is ModelSpec::row_dim wide: wdl's wide weight follows its embedding). dlrm's
// MLP reads the interaction's output; its Bottom is an Mlp of ReLU layers ending at the
// embedding width (absent without dense features).
//
// Parameter layout: the MLP's parameters first (so a dnn model's vector is the Mlp's, and
// the CUDA backend and older checkpoints read it unchanged), then the cross layers' or the
// bottom MLP's. Blocks() names every tensor for checkpoints (/dense/layers/<l>/{weight,bias},
// /dense/cross/<l>/..., /dense/bottom/<l>/{weight,bias}).
//
// Thread safety: immutable after construction and shareable; a Workspace belongs to one
// caller at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "strata/model/cross_net.h"
#include "strata/model/dot_interaction.h"
#include "strata/model/gemm.h"
#include "strata/model/mlp.h"
#include "strata/model/model_spec.h"

namespace strata {

class DenseModel {
 public:
  explicit DenseModel(const ModelSpec& spec);

  const Mlp& mlp() const { return mlp_; }
  // Whether the model is its MLP alone over the input row (dnn): a caller may then run the
  // MLP itself (Mlp::ForwardRounded and the rest) for Forward and Backward.
  bool mlp_alone() const { return spec_.kind == ModelKind::kDnn; }
  // dcn's cross layers and dlrm's bottom MLP; null when the model has none.
  const CrossNet* cross() const { return cross_ ? &*cross_ : nullptr; }
  const Mlp* bottom() const { return bottom_ ? &*bottom_ : nullptr; }
  int input_width() const { return input_width_; }
  size_t num_params() const {
    return mlp_.num_params() + (cross_ ? cross_->num_params() : 0) + (bottom_ ? bottom_->num_params() : 0);
  }
  std::vector<ParamBlock> Blocks() const;

  // The MLP's init (Mlp::InitParams), then the cross layers'.
  void InitParams(uint64_t seed, float* params) const;

  struct Workspace {
    Mlp::Workspace mlp;
    CrossNet::Workspace cross;
    std::vector<float> dcross;  // dLoss/d(cross output) (max_batch, width)
    Mlp::Workspace bottom;      // dlrm
    std::vector<float> dense, z, dz, ddense;  // dlrm: (max_batch, dense), (max_batch, d) x2, (max_batch, dense)
    std::vector<float> top, dtop;             // dlrm, wdl: the MLP's input and its gradient
  };
  // As Mlp::MakeWorkspace, for every part of the model.
  Workspace MakeWorkspace(int max_batch, int threads = 1, DensePrecision precision = DensePrecision::kFp32) const;

  // As Mlp::Forward and Mlp::Backward, for the whole model; dinput is required.
  void Forward(const float* params, const float* input, int B, Workspace* ws, float* logits,
               DensePrecision precision = DensePrecision::kFp32) const;
  void Backward(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                float* dparams, float* dinput, DensePrecision precision = DensePrecision::kFp32) const;

 private:
  void ForwardDlrm(const float* params, const float* input, int B, Workspace* ws, float* logits,
                   DensePrecision precision) const;
  void BackwardDlrm(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                    float* dparams, float* dinput, DensePrecision precision) const;
  void ForwardWdl(const float* params, const float* input, int B, Workspace* ws, float* logits,
                  DensePrecision precision) const;
  void BackwardWdl(const float* params, int B, const float* dlogits, Workspace* ws, float* dparams, float* dinput,
                   DensePrecision precision) const;
  // The dense columns of the input rows, packed (B, num_dense), and back.
  void GatherDense(const float* input, int B, float* dense) const;
  void ScatterDense(const float* ddense, int B, float* dinput) const;

  ModelSpec spec_;
  int input_width_;          // of an input row
  DotInteraction dot_;       // dlrm
  Mlp mlp_;
  std::optional<CrossNet> cross_;
  std::optional<Mlp> bottom_;
};

}  // namespace strata
