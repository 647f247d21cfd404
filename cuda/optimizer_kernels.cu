// Optimizer kernels: one thread per coordinate (row-wise Adagrad and lazy Adam: one per row,
// which updates the row's shared state and its coordinates in order, as the host does).
#include "optimizer_kernels.cuh"

#include "cuda_check.cuh"

namespace strata::gpu {
namespace {

// Freq and last pass follow the embedding and state floats (RowLayout).
__device__ void CountTouch(uint32_t* row, int floats, uint32_t count, uint32_t pass) {
  row[floats] += count;
  row[floats + 1] = pass;
}

// The per-coordinate optimizers' settings.
struct CoordinateStep {
  SparseOptimizerKind kind;
  float lr, l1, l2, beta;  // FTRL's strengths and smoothing
  int state_floats;
};

__global__ void SparseApplyKernel(uint32_t* const* rows, const float* grads, const uint32_t* counts, size_t n,
                                  int dim, CoordinateStep k, uint32_t pass) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * dim) return;
  const size_t i = idx / dim;
  const int c = static_cast<int>(idx % dim);
  uint32_t* row = rows[i];
  if (row == nullptr) return;
  float* embedding = reinterpret_cast<float*>(row);
  if (k.kind == SparseOptimizerKind::kAdagrad) {
    AdagradUpdate(&embedding[c], &embedding[dim + c], grads[idx], k.lr);
  } else if (k.kind == SparseOptimizerKind::kFtrl) {
    FtrlUpdate(&embedding[c], &embedding[dim + c], &embedding[2 * dim + c], grads[idx], k.lr, k.l1, k.l2, k.beta);
  } else {
    SgdUpdate(&embedding[c], grads[idx], k.lr);
  }
  if (c == 0) CountTouch(row, dim + k.state_floats, counts[i], pass);
}

__global__ void PerRowKernel(uint32_t* const* rows, const float* grads, const uint32_t* counts, size_t n, int dim,
                             bool adam, float lr, uint32_t pass) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n || rows[i] == nullptr) return;
  float* w = reinterpret_cast<float*>(rows[i]);
  float* state = w + dim;
  if (adam) {
    LazyAdamUpdate(w, state, state + dim, state + 2 * dim, &grads[i * dim], dim, lr);
    CountTouch(rows[i], 3 * dim + 1, counts[i], pass);
  } else {
    RowwiseAdagradUpdate(w, state, &grads[i * dim], dim, lr);
    CountTouch(rows[i], dim + 1, counts[i], pass);
  }
}

__global__ void AdamKernel(float* params, float* m, float* v, const float* grad, size_t n, AdamStepScalars k) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) AdamUpdate(&params[i], &m[i], &v[i], grad[i], k);
}

__global__ void SgdKernel(float* params, const float* grad, size_t n, float lr) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) SgdUpdate(&params[i], grad[i], lr);
}

}  // namespace

Status LaunchSparseApply(uint32_t* const* rows, const float* grads, const uint32_t* counts, size_t n,
                         const ModelSpec& spec, float lr, uint32_t pass, cudaStream_t stream) {
  const int dim = spec.row_dim();
  if (n == 0) return Status::OK();
  const SparseOptimizerKind kind = spec.sparse_optimizer;
  if (kind == SparseOptimizerKind::kRowwiseAdagrad || kind == SparseOptimizerKind::kAdam) {
    PerRowKernel<<<GridFor(n), kBlock, 0, stream>>>(rows, grads, counts, n, dim, kind == SparseOptimizerKind::kAdam,
                                                    lr, pass);
  } else {
    const CoordinateStep k{kind, lr, spec.ftrl_l1, spec.ftrl_l2, spec.ftrl_beta, SparseStateFloats(spec)};
    SparseApplyKernel<<<GridFor(n * dim), kBlock, 0, stream>>>(rows, grads, counts, n, dim, k, pass);
  }
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchAdamStep(float* params, float* m, float* v, const float* grad, size_t n, const AdamStepScalars& k,
                      cudaStream_t stream) {
  if (n == 0) return Status::OK();
  AdamKernel<<<GridFor(n), kBlock, 0, stream>>>(params, m, v, grad, n, k);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchSgdStep(float* params, const float* grad, size_t n, float lr, cudaStream_t stream) {
  if (n == 0) return Status::OK();
  SgdKernel<<<GridFor(n), kBlock, 0, stream>>>(params, grad, n, lr);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
