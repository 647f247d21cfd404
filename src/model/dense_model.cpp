// DenseModel: the MLP composed with the model's FM term or cross layers
// (strata/model/dense_model.h).
#include "strata/model/dense_model.h"

#include <algorithm>
#include <string>

#include "strata/model/fm.h"

namespace strata {

DenseModel::DenseModel(const ModelSpec& spec) : spec_(spec), mlp_(spec) {
  if (spec.kind == ModelKind::kDcn) cross_.emplace(spec.mlp_input_width(), spec.cross_layers, spec.cross_rank);
}

std::vector<ParamBlock> DenseModel::Blocks() const {
  std::vector<ParamBlock> blocks;
  for (int l = 0; l < mlp_.num_layers(); ++l) {
    const std::string prefix = "layers/" + std::to_string(l) + "/";
    blocks.push_back({prefix + "weight", mlp_.weight_offset(l), mlp_.fan_in(l), mlp_.fan_out(l)});
    blocks.push_back({prefix + "bias", mlp_.bias_offset(l), 0, mlp_.fan_out(l)});
  }
  if (cross_) {
    for (ParamBlock& b : cross_->Blocks(mlp_.num_params())) blocks.push_back(std::move(b));
  }
  return blocks;
}

void DenseModel::InitParams(uint64_t seed, float* params) const {
  mlp_.InitParams(seed, params);
  if (cross_) cross_->InitParams(seed, params + mlp_.num_params());
}

DenseModel::Workspace DenseModel::MakeWorkspace(int max_batch, int threads) const {
  Workspace ws;
  ws.mlp = mlp_.MakeWorkspace(max_batch, threads);
  if (cross_) {
    ws.cross = cross_->MakeWorkspace(max_batch);
    ws.dcross.resize(static_cast<size_t>(max_batch) * cross_->width());
  }
  return ws;
}

void DenseModel::Forward(const float* params, const float* input, int B, Workspace* ws, float* logits,
                         DensePrecision precision) const {
  const float* x = input;
  if (cross_) x = cross_->Forward(precision, &ws->mlp.gemm, params + mlp_.num_params(), input, B, &ws->cross);
  mlp_.Forward(params, x, B, &ws->mlp, logits, precision);
  if (spec_.kind == ModelKind::kDeepFm) {
    AddFmTerm(input, B, input_width(), spec_.num_slots, spec_.embedding_dim, logits);
  }
}

void DenseModel::Backward(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                          float* dparams, float* dinput, DensePrecision precision) const {
  if (cross_) {
    const float* x = ws->cross.x.back().data();
    mlp_.Backward(params, x, B, dlogits, &ws->mlp, dparams, ws->dcross.data(), precision);
    std::fill(dinput, dinput + static_cast<size_t>(B) * input_width(), 0.0f);
    cross_->Backward(precision, &ws->mlp.gemm, params + mlp_.num_params(), input, B, ws->dcross.data(), &ws->cross,
                     dparams + mlp_.num_params(), dinput);
    return;
  }
  mlp_.Backward(params, input, B, dlogits, &ws->mlp, dparams, dinput, precision);
  if (spec_.kind == ModelKind::kDeepFm) {
    AddFmGradient(input, B, input_width(), spec_.num_slots, spec_.embedding_dim, dlogits, dinput);
  }
}

}  // namespace strata
