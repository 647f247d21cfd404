// DLRM's dot interaction and dense-feature moves as elementwise kernels.
#include "dlrm_kernels.cuh"

#include "cuda_check.cuh"

namespace strata::gpu {
namespace {

__device__ const float* VectorOf(const float* input, const float* z, DotShape shape, size_t i, int v) {
  if (shape.bottom) {
    if (v == 0) return z + i * shape.dim;
    --v;
  }
  return input + i * shape.input_width + static_cast<size_t>(v) * shape.dim;
}

// The position of pair (a, b), a < b, among the pairs in (a, b) order.
__device__ int PairIndex(int V, int a, int b) { return a * V - a * (a + 1) / 2 + (b - a - 1); }

__global__ void DotForwardKernel(const float* input, const float* z, int B, DotShape shape, float* out) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const int width = shape.output_width(), V = shape.vectors();
  if (idx >= static_cast<size_t>(B) * width) return;
  const size_t i = idx / width;
  int p = static_cast<int>(idx % width);
  if (shape.bottom) {
    if (p < shape.dim) {
      out[idx] = z[i * shape.dim + p];
      return;
    }
    p -= shape.dim;
  }
  int a = 0;
  while (p >= V - 1 - a) p -= V - 1 - a++;
  const float* va = VectorOf(input, z, shape, i, a);
  const float* vb = VectorOf(input, z, shape, i, a + 1 + p);
  float dot = 0.0f;
  for (int k = 0; k < shape.dim; ++k) dot += va[k] * vb[k];
  out[idx] = dot;
}

__global__ void DotBackwardKernel(const float* input, const float* z, int B, DotShape shape, const float* dout,
                                  float* dinput, float* dz) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const int V = shape.vectors(), d = shape.dim;
  if (idx >= static_cast<size_t>(B) * V * d) return;
  const size_t i = idx / (static_cast<size_t>(V) * d);
  const int v = static_cast<int>(idx / d % V), k = static_cast<int>(idx % d);
  const float* g = dout + i * shape.output_width();
  float sum = 0.0f;
  if (shape.bottom) {
    if (v == 0) sum = g[k];
    g += d;
  }
  for (int a = 0; a < v; ++a) sum += g[PairIndex(V, a, v)] * VectorOf(input, z, shape, i, a)[k];
  for (int b = v + 1; b < V; ++b) sum += g[PairIndex(V, v, b)] * VectorOf(input, z, shape, i, b)[k];
  if (shape.bottom && v == 0) {
    dz[i * d + k] = sum;
    return;
  }
  const int slot = shape.bottom ? v - 1 : v;
  dinput[i * shape.input_width + static_cast<size_t>(slot) * d + k] += sum;
}

__global__ void GatherDenseKernel(const float* input, int B, int input_width, int first, int nd, float* dense) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * nd) return;
  dense[idx] = input[idx / nd * input_width + first + idx % nd];
}

__global__ void ScatterDenseKernel(const float* dense, int B, int input_width, int first, int nd, float* input) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * nd) return;
  input[idx / nd * input_width + first + idx % nd] = dense[idx];
}

}  // namespace

Status LaunchDotForward(const float* input, const float* z, int B, DotShape shape, float* out, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * shape.output_width();
  if (total == 0) return Status::OK();
  DotForwardKernel<<<GridFor(total), kBlock, 0, stream>>>(input, z, B, shape, out);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchDotBackward(const float* input, const float* z, int B, DotShape shape, const float* dout, float* dinput,
                         float* dz, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * shape.vectors() * shape.dim;
  if (total == 0) return Status::OK();
  DotBackwardKernel<<<GridFor(total), kBlock, 0, stream>>>(input, z, B, shape, dout, dinput, dz);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchGatherDense(const float* input, int B, int input_width, int first, int nd, float* dense,
                         cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * nd;
  if (total == 0) return Status::OK();
  GatherDenseKernel<<<GridFor(total), kBlock, 0, stream>>>(input, B, input_width, first, nd, dense);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchScatterDense(const float* dense, int B, int input_width, int first, int nd, float* input,
                          cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * nd;
  if (total == 0) return Status::OK();
  ScatterDenseKernel<<<GridFor(total), kBlock, 0, stream>>>(dense, B, input_width, first, nd, input);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
