// DenseModel: everything of a --model above the pooled embeddings, on the host: the MLP
// (strata/model/mlp.h) and what the model adds to it, behind one parameter vector.
//   dnn:    logit = MLP(x)
//   deepfm: logit = MLP(x) + FM(embeddings of x)          (strata/model/fm.h)
//   dcn:    logit = MLP(CrossNet(x))                       (strata/model/cross_net.h)
// where x is an input row (the pooled slots, slot-major, then the dense features).
//
// Parameter layout: the MLP's parameters first (so a dnn model's vector is the Mlp's, and
// the CUDA backend and older checkpoints read it unchanged), then the cross layers'.
// Blocks() names every tensor for checkpoints (/dense/layers/<l>/{weight,bias},
// /dense/cross/<l>/...).
//
// Thread safety: immutable after construction and shareable; a Workspace belongs to one
// caller at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "strata/model/cross_net.h"
#include "strata/model/gemm.h"
#include "strata/model/mlp.h"
#include "strata/model/model_spec.h"

namespace strata {

class DenseModel {
 public:
  explicit DenseModel(const ModelSpec& spec);

  const Mlp& mlp() const { return mlp_; }
  int input_width() const { return mlp_.input_width(); }
  size_t num_params() const { return mlp_.num_params() + (cross_ ? cross_->num_params() : 0); }
  std::vector<ParamBlock> Blocks() const;

  // The MLP's init (Mlp::InitParams), then the cross layers'.
  void InitParams(uint64_t seed, float* params) const;

  struct Workspace {
    Mlp::Workspace mlp;
    CrossNet::Workspace cross;
    std::vector<float> dcross;  // dLoss/d(cross output) (max_batch, width)
  };
  Workspace MakeWorkspace(int max_batch, int threads = 1) const;

  // As Mlp::Forward and Mlp::Backward, for the whole model; dinput is required.
  void Forward(const float* params, const float* input, int B, Workspace* ws, float* logits,
               DensePrecision precision = DensePrecision::kFp32) const;
  void Backward(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                float* dparams, float* dinput, DensePrecision precision = DensePrecision::kFp32) const;

 private:
  ModelSpec spec_;
  Mlp mlp_;
  std::optional<CrossNet> cross_;
};

}  // namespace strata
