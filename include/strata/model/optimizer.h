// Optimizers of the CTR model on the host.
//
// Sparse side: rows in the layout of common/row.h (embedding, one state float per
// coordinate, freq, last pass) with dim = ModelSpec::embedding_dim. InitRow creates a row
// whose value is a pure function of (key, seed), so a row created lazily on any rank, in
// any order, is the same row. ApplySparseRow applies one step of the sparse optimizer to a
// row's floats from a summed gradient, through the per-coordinate functions of
// update_math.h that the CUDA backend shares.
//
// Dense side: DenseOptimizer owns the Adam moments of the MLP's flat parameter vector and
// its step count; they are plain vectors so checkpoints save and restore them exactly.
//
// Thread safety: the free functions touch only the memory passed in (distinct rows may be
// updated concurrently). A DenseOptimizer is externally synchronized; one Step's parts may
// run on several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/common/status.h"
#include "strata/model/model_spec.h"
#include "strata/model/update_math.h"

namespace strata {

// Writes a fresh row of RowLayoutOf(spec).bytes() bytes (in spec.row_dtype, rounded to nearest
// even): embedding coordinate c is uniform(-init_scale, init_scale) from a counter-based hash
// of (key, seed, c); every state
// float = adagrad_initial_accumulator (also for SGD, which never reads it), 0 for Adam; FTRL
// rows start at zero, weights and state (z = n = 0), as FTRL-proximal does; freq = 0;
// last pass = 0.
void InitRow(const ModelSpec& spec, uint64_t key, uint8_t* row);

// One step of spec.sparse_optimizer with rate lr (spec.lr_sparse, scheduled) on embedding (dim floats) and
// state (SparseStateFloats(spec) floats) from grad (dim floats, the gradient summed over the global step).
// Adagrad: state += g^2; w -= lr g / sqrt(state). Row-wise Adagrad: state += mean(g^2);
// w -= lr g / sqrt(state). Adam (lazy): state = [m (dim), v (dim), steps], update_math.h's
// LazyAdamUpdate. FTRL: state = [z (dim), n (dim)], update_math.h's FtrlUpdate with alpha = lr.
// SGD: w -= lr g; state untouched.
void ApplySparseRow(const ModelSpec& spec, float lr, float* embedding, float* state, const float* grad);

class DenseOptimizer {
 public:
  static constexpr float kAdamBeta1 = 0.9f;
  static constexpr float kAdamBeta2 = 0.999f;
  static constexpr float kAdamEps = 1e-8f;

  // Optimizer for n parameters; Adam moments start at zero (SGD keeps none).
  DenseOptimizer(DenseOptimizerKind kind, float lr, size_t n);

  DenseOptimizerKind kind() const { return kind_; }
  // The rate of the next steps (the base rate times the schedule's factor).
  void set_lr(float lr) { lr_ = lr; }
  size_t size() const { return n_; }

  // params -= update(grad). REQUIRES: n == size().
  void Step(float* params, const float* grad, size_t n) {
    Step(params, grad, n, [](size_t all, const auto& part) { part(0, all); });
  }
  // The same with the coordinates split: for_parts(n, part) runs part(begin, end) over
  // contiguous parts of [0, n), on any threads; each coordinate's update is its own, so the
  // split does not change the result.
  template <typename ForParts>
  void Step(float* params, const float* grad, size_t n, const ForParts& for_parts) {
    const AdamStepScalars k = BeginStep(n);
    for_parts(n, [&](size_t begin, size_t end) { StepRange(k, params, grad, begin, end); });
  }

  // State for checkpoints: steps taken, and Adam's first and second moments (size() floats
  // each for Adam, empty for SGD).
  int64_t steps() const { return steps_; }
  const std::vector<float>& m() const { return m_; }
  const std::vector<float>& v() const { return v_; }

  // Restores a saved state. Fails with InvalidArgument (naming the mismatch) when the
  // moments' sizes do not match this optimizer's kind and size, or steps < 0.
  Status Restore(int64_t steps, std::vector<float> m, std::vector<float> v);

 private:
  // Counts the step and returns Adam's scalars for it (unused by SGD).
  AdamStepScalars BeginStep(size_t n);
  void StepRange(const AdamStepScalars& k, float* params, const float* grad, size_t begin, size_t end);

  DenseOptimizerKind kind_;
  float lr_;
  size_t n_;
  int64_t steps_ = 0;
  std::vector<float> m_;
  std::vector<float> v_;
};

}  // namespace strata
