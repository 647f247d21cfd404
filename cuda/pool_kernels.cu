// Gather-pool and scatter kernels, deterministic and without atomics. Pooling: one thread
// per output float, summing its terms in batch order. Scatter: one thread per (key, d)
// for keys of at most kWarpKeyCount occurrences, summing in batch order; a warp per more
// frequent key (a hot token occurs thousands of times in a batch), lane j summing the
// occurrences j, j + 32, ... in order and the lanes then added in a fixed tree.
#include "pool_kernels.cuh"

#include "cuda_check.cuh"
#include "strata/model/pooling.h"

namespace strata::gpu {
namespace {

__global__ void PoolKernel(const uint32_t* offsets, const uint32_t* local, const float* emb,
                           const float* dense, int B, int S, int dim, int nd, float* input) {
  const int width = S * dim + nd;
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * width) return;
  const size_t i = idx / width;
  const int c = static_cast<int>(idx % width);
  if (c >= S * dim) {
    input[idx] = dense[i * nd + (c - S * dim)];
    return;
  }
  const int s = c / dim, d = c % dim;
  const size_t seg = i * S + s;
  float sum = 0.0f;
  for (uint32_t j = offsets[seg]; j < offsets[seg + 1]; ++j) sum += emb[static_cast<size_t>(local[j]) * dim + d];
  input[idx] = sum;
}

constexpr uint32_t kWarpKeyCount = 64;
constexpr int kWarp = 32;

__global__ void ScatterKernel(const uint32_t* key_start, const uint32_t* counts, const uint32_t* sorted_base,
                              const float* dinput, size_t k, int dim, float* grads) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= k * dim) return;
  const size_t l = idx / dim;
  if (counts[l] > kWarpKeyCount) return;  // HotScatterKernel's
  const int d = static_cast<int>(idx % dim);
  const uint32_t begin = key_start[l], end = begin + counts[l];
  float sum = 0.0f;
  for (uint32_t t = begin; t < end; ++t) sum += dinput[sorted_base[t] + d];
  grads[idx] = sum;
}

// One warp per key, skipping the keys ScatterKernel sums.
__global__ void HotScatterKernel(const uint32_t* key_start, const uint32_t* counts, const uint32_t* sorted_base,
                                 const float* dinput, size_t k, int dim, float* grads) {
  const size_t l = (blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (l >= k || counts[l] <= kWarpKeyCount) return;  // whole warps leave together
  const uint32_t begin = key_start[l], end = begin + counts[l];
  for (int d = 0; d < dim; ++d) {
    float sum = 0.0f;
    for (uint32_t t = begin + lane; t < end; t += kWarp) sum += dinput[sorted_base[t] + d];
    for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) grads[l * dim + d] = sum;
  }
}

__global__ void ScaleMeanSlotsKernel(const uint32_t* offsets, const uint8_t* mean, int B, int S, int dim, int width,
                                     float* x) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * S * dim) return;
  const size_t i = idx / (static_cast<size_t>(S) * dim);
  const int c = static_cast<int>(idx % (static_cast<size_t>(S) * dim));
  const int s = c / dim;
  if (!mean[s]) return;
  const size_t seg = i * S + s;
  x[i * width + c] *= MeanScale(offsets[seg + 1] - offsets[seg]);
}

}  // namespace

Status LaunchScaleMeanSlots(const uint32_t* offsets, const uint8_t* mean, int B, int S, int dim, int width, float* x,
                            cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * S * dim;
  if (total == 0) return Status::OK();
  ScaleMeanSlotsKernel<<<GridFor(total), kBlock, 0, stream>>>(offsets, mean, B, S, dim, width, x);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchPool(const uint32_t* offsets, const uint32_t* local, const float* emb, const float* dense,
                  int B, int S, int dim, int nd, float* input, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * (S * dim + nd);
  if (total == 0) return Status::OK();
  PoolKernel<<<GridFor(total), kBlock, 0, stream>>>(offsets, local, emb, dense, B, S, dim, nd, input);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchScatter(const uint32_t* key_start, const uint32_t* counts, const uint32_t* sorted_base,
                     const float* dinput, size_t k, int dim, float* grads, cudaStream_t stream) {
  if (k == 0) return Status::OK();
  ScatterKernel<<<GridFor(k * dim), kBlock, 0, stream>>>(key_start, counts, sorted_base, dinput, k, dim, grads);
  STRATA_CUDA_LAUNCHED();
  HotScatterKernel<<<GridFor(k * kWarp), kBlock, 0, stream>>>(key_start, counts, sorted_base, dinput, k, dim, grads);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
