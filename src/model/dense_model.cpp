// DenseModel: the MLP composed with the model's FM term or cross layers
// (strata/model/dense_model.h).
#include "strata/model/dense_model.h"

#include <algorithm>
#include <string>

#include "strata/model/fm.h"

namespace strata {

namespace {

DotInteraction DotOf(const ModelSpec& spec) {
  return DotInteraction{spec.num_slots, spec.embedding_dim, spec.mlp_input_width(), spec.num_dense > 0};
}

// The MLP: over the input row, or over dlrm's interaction.
Mlp TopOf(const ModelSpec& spec) {
  if (spec.kind != ModelKind::kDlrm) return Mlp(spec);
  return Mlp(DotOf(spec).output_width(), spec.mlp, Mlp::Output::kLogit);
}

}  // namespace

DenseModel::DenseModel(const ModelSpec& spec)
    : spec_(spec), input_width_(spec.pooled_width()), dot_(DotOf(spec)), mlp_(TopOf(spec)) {
  if (spec.kind == ModelKind::kDcn) cross_.emplace(spec.mlp_input_width(), spec.cross_layers, spec.cross_rank);
  if (spec.kind == ModelKind::kDlrm && spec.num_dense > 0) {
    std::vector<int> widths = spec.bottom_mlp;
    widths.push_back(spec.embedding_dim);
    bottom_.emplace(spec.num_dense, widths, Mlp::Output::kRelu);
  }
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
  for (int l = 0; bottom_ && l < bottom_->num_layers(); ++l) {
    const std::string prefix = "bottom/" + std::to_string(l) + "/";
    const size_t base = mlp_.num_params();
    blocks.push_back({prefix + "weight", base + bottom_->weight_offset(l), bottom_->fan_in(l), bottom_->fan_out(l)});
    blocks.push_back({prefix + "bias", base + bottom_->bias_offset(l), 0, bottom_->fan_out(l)});
  }
  return blocks;
}

void DenseModel::InitParams(uint64_t seed, float* params) const {
  mlp_.InitParams(seed, params);
  if (cross_) cross_->InitParams(seed, params + mlp_.num_params());
  if (bottom_) bottom_->InitParams(seed ^ 0x626f74746f6dULL, params + mlp_.num_params());  // "bottom"
}

DenseModel::Workspace DenseModel::MakeWorkspace(int max_batch, int threads, DensePrecision precision) const {
  Workspace ws;
  ws.mlp = mlp_.MakeWorkspace(max_batch, threads, precision);
  if (cross_) {
    ws.cross = cross_->MakeWorkspace(max_batch);
    ws.dcross.resize(static_cast<size_t>(max_batch) * cross_->width());
  }
  if (spec_.kind == ModelKind::kDlrm || spec_.kind == ModelKind::kWdl) {
    const size_t rows = static_cast<size_t>(max_batch);
    ws.top.resize(rows * mlp_.input_width());
    ws.dtop.resize(rows * mlp_.input_width());
  }
  if (bottom_) {
    const size_t rows = static_cast<size_t>(max_batch);
    ws.bottom = bottom_->MakeWorkspace(max_batch, threads, precision);
    ws.dense.resize(rows * spec_.num_dense);
    ws.ddense.resize(rows * spec_.num_dense);
    ws.z.resize(rows * spec_.embedding_dim);
    ws.dz.resize(rows * spec_.embedding_dim);
  }
  return ws;
}

void DenseModel::Forward(const float* params, const float* input, int B, Workspace* ws, float* logits,
                         DensePrecision precision) const {
  if (spec_.kind == ModelKind::kDlrm) return ForwardDlrm(params, input, B, ws, logits, precision);
  if (spec_.kind == ModelKind::kWdl) return ForwardWdl(params, input, B, ws, logits, precision);
  const float* x = input;
  if (cross_) x = cross_->Forward(precision, &ws->mlp.gemm, params + mlp_.num_params(), input, B, &ws->cross);
  mlp_.Forward(params, x, B, &ws->mlp, logits, precision);
  if (spec_.kind == ModelKind::kDeepFm) {
    AddFmTerm(input, B, input_width(), spec_.num_slots, spec_.embedding_dim, logits);
  }
}

void DenseModel::Backward(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                          float* dparams, float* dinput, DensePrecision precision) const {
  if (spec_.kind == ModelKind::kDlrm) return BackwardDlrm(params, input, B, dlogits, ws, dparams, dinput, precision);
  if (spec_.kind == ModelKind::kWdl) return BackwardWdl(params, B, dlogits, ws, dparams, dinput, precision);
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

void DenseModel::GatherDense(const float* input, int B, float* dense) const {
  const int first = spec_.num_slots * spec_.embedding_dim, n = spec_.num_dense;
  for (int i = 0; i < B; ++i) {
    std::copy_n(input + static_cast<size_t>(i) * input_width_ + first, n, dense + static_cast<size_t>(i) * n);
  }
}

void DenseModel::ScatterDense(const float* ddense, int B, float* dinput) const {
  const int first = spec_.num_slots * spec_.embedding_dim, n = spec_.num_dense;
  for (int i = 0; i < B; ++i) {
    std::copy_n(ddense + static_cast<size_t>(i) * n, n, dinput + static_cast<size_t>(i) * input_width_ + first);
  }
}

void DenseModel::ForwardDlrm(const float* params, const float* input, int B, Workspace* ws, float* logits,
                             DensePrecision precision) const {
  const float* z = nullptr;
  if (bottom_) {
    GatherDense(input, B, ws->dense.data());
    bottom_->Forward(params + mlp_.num_params(), ws->dense.data(), B, &ws->bottom, ws->z.data(), precision);
    z = ws->z.data();
  }
  dot_.Forward(input, z, B, ws->top.data());
  mlp_.Forward(params, ws->top.data(), B, &ws->mlp, logits, precision);
}

void DenseModel::BackwardDlrm(const float* params, const float* input, int B, const float* dlogits, Workspace* ws,
                              float* dparams, float* dinput, DensePrecision precision) const {
  mlp_.Backward(params, ws->top.data(), B, dlogits, &ws->mlp, dparams, ws->dtop.data(), precision);
  std::fill(dinput, dinput + static_cast<size_t>(B) * input_width_, 0.0f);
  dot_.Backward(input, bottom_ ? ws->z.data() : nullptr, B, ws->dtop.data(), dinput, ws->dz.data());
  if (!bottom_) return;
  bottom_->Backward(params + mlp_.num_params(), ws->dense.data(), B, ws->dz.data(), &ws->bottom,
                    dparams + mlp_.num_params(), ws->ddense.data(), precision);
  ScatterDense(ws->ddense.data(), B, dinput);
}

// wdl's input row: per slot the embedding (d) and its wide weight, then the dense features.
// The MLP reads the embeddings and the dense features; the wide weights sum into the logit.
void DenseModel::ForwardWdl(const float* params, const float* input, int B, Workspace* ws, float* logits,
                            DensePrecision precision) const {
  const int S = spec_.num_slots, d = spec_.embedding_dim, rd = d + 1, deep = mlp_.input_width();
  for (int i = 0; i < B; ++i) {
    const float* x = input + static_cast<size_t>(i) * input_width_;
    float* top = ws->top.data() + static_cast<size_t>(i) * deep;
    for (int s = 0; s < S; ++s) std::copy_n(x + s * rd, d, top + s * d);
    std::copy_n(x + S * rd, spec_.num_dense, top + S * d);
  }
  mlp_.Forward(params, ws->top.data(), B, &ws->mlp, logits, precision);
  for (int i = 0; i < B; ++i) {
    const float* x = input + static_cast<size_t>(i) * input_width_;
    float wide = 0.0f;
    for (int s = 0; s < S; ++s) wide += x[s * rd + d];
    logits[i] += wide;
  }
}

void DenseModel::BackwardWdl(const float* params, int B, const float* dlogits, Workspace* ws, float* dparams,
                             float* dinput, DensePrecision precision) const {
  const int S = spec_.num_slots, d = spec_.embedding_dim, rd = d + 1, deep = mlp_.input_width();
  mlp_.Backward(params, ws->top.data(), B, dlogits, &ws->mlp, dparams, ws->dtop.data(), precision);
  for (int i = 0; i < B; ++i) {
    const float* g = ws->dtop.data() + static_cast<size_t>(i) * deep;
    float* dx = dinput + static_cast<size_t>(i) * input_width_;
    for (int s = 0; s < S; ++s) {
      std::copy_n(g + s * d, d, dx + s * rd);
      dx[s * rd + d] = dlogits[i];
    }
    std::copy_n(g + S * d, spec_.num_dense, dx + S * rd);
  }
}

}  // namespace strata
