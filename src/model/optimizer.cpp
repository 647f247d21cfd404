// Host optimizers: row initialisation, the sparse row step and the dense Adam/SGD step,
// all built on the per-coordinate functions of update_math.h (Adagrad's and Adam's loops
// through the CPU's vector kernels, update_kernels.h).
#include "strata/model/optimizer.h"

#include <cassert>
#include <string>
#include <utility>

#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/model/update_kernels.h"
#include "strata/model/update_math.h"

namespace strata {

void InitRow(const ModelSpec& spec, uint64_t key, uint8_t* row) {
  const RowLayout layout = RowLayoutOf(spec);
  float* state = layout.State(row);
  // Counter-based: coordinate c's value hashes (key, seed, c) alone, never a stream position.
  const uint64_t base = Mix64(key ^ Mix64(spec.seed ^ 0x726f772d696e6974ULL));  // "row-init"
  const bool zero = spec.sparse_optimizer == SparseOptimizerKind::kFtrl;  // FTRL-proximal: w = z = n = 0
  float emb[kMaxEmbeddingDim];
  for (int c = 0; c < spec.row_dim(); ++c) {
    float u = static_cast<float>(Mix64(base + static_cast<uint64_t>(c)) >> 40) * 0x1.0p-24f;
    emb[c] = zero ? 0.0f : spec.init_scale * (2.0f * u - 1.0f);
  }
  layout.StoreEmbedding(emb, row);
  // Adam's moments and step count start at zero; Adagrad's sums at the initial accumulator.
  const float state_init = spec.sparse_optimizer == SparseOptimizerKind::kAdam ||
                                   spec.sparse_optimizer == SparseOptimizerKind::kFtrl
                               ? 0.0f
                               : spec.adagrad_initial_accumulator;
  for (int c = 0; c < layout.state_floats; ++c) state[c] = state_init;
  layout.SetFreq(row, 0);
  layout.SetLastPass(row, 0);
}

void ApplySparseRow(const ModelSpec& spec, float lr, float* embedding, float* state, const float* grad) {
  const int dim = spec.row_dim();
  switch (spec.sparse_optimizer) {
    case SparseOptimizerKind::kAdagrad:
      Kernels().adagrad(embedding, state, grad, static_cast<size_t>(dim), lr);
      break;
    case SparseOptimizerKind::kSgd:
      for (int c = 0; c < dim; ++c) SgdUpdate(&embedding[c], grad[c], lr);
      break;
    case SparseOptimizerKind::kRowwiseAdagrad:
      RowwiseAdagradUpdate(embedding, state, grad, dim, lr);
      break;
    case SparseOptimizerKind::kAdam:
      LazyAdamUpdate(embedding, state, state + dim, state + 2 * dim, grad, dim, lr);
      break;
    case SparseOptimizerKind::kFtrl:
      for (int c = 0; c < dim; ++c) {
        FtrlUpdate(&embedding[c], &state[c], &state[dim + c], grad[c], lr, spec.ftrl_l1, spec.ftrl_l2, spec.ftrl_beta);
      }
      break;
  }
}

DenseOptimizer::DenseOptimizer(DenseOptimizerKind kind, float lr, size_t n)
    : kind_(kind), lr_(lr), n_(n) {
  if (kind_ == DenseOptimizerKind::kAdam) {
    m_.assign(n_, 0.0f);
    v_.assign(n_, 0.0f);
  }
}

AdamStepScalars DenseOptimizer::BeginStep(size_t n) {
  assert(n == n_);
  ++steps_;
  return MakeAdamStepScalars(lr_, kAdamBeta1, kAdamBeta2, kAdamEps, steps_);
}

void DenseOptimizer::StepRange(const AdamStepScalars& k, float* params, const float* grad, size_t begin,
                               size_t end) {
  switch (kind_) {
    case DenseOptimizerKind::kAdam:
      Kernels().adam(params + begin, m_.data() + begin, v_.data() + begin, grad + begin, end - begin, k);
      break;
    case DenseOptimizerKind::kSgd:
      for (size_t i = begin; i < end; ++i) SgdUpdate(&params[i], grad[i], lr_);
      break;
  }
}

Status DenseOptimizer::Restore(int64_t steps, std::vector<float> m, std::vector<float> v) {
  const size_t want = kind_ == DenseOptimizerKind::kAdam ? n_ : 0;
  if (steps < 0) {
    return Status::InvalidArgument("dense optimizer state: negative step count " +
                                   std::to_string(steps));
  }
  if (m.size() != want || v.size() != want) {
    return Status::InvalidArgument("dense optimizer state: moments of " +
                                   std::to_string(m.size()) + "/" + std::to_string(v.size()) +
                                   " floats, expected " + std::to_string(want) + " each");
  }
  steps_ = steps;
  m_ = std::move(m);
  v_ = std::move(v);
  return Status::OK();
}

}  // namespace strata
