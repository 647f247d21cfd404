// FM term kernels (fm_kernels.cuh): __fadd_rn and __fmul_rn keep nvcc from fusing a
// multiply and an add, which the host computes as two rounded operations.
#include "fm_kernels.cuh"

#include "cuda_check.cuh"

namespace strata::gpu {
namespace {

__device__ float SlotSum(const float* row, int S, int dim, int k) {
  float sum = 0.0f;
  for (int s = 0; s < S; ++s) sum = __fadd_rn(sum, row[s * dim + k]);
  return sum;
}

__global__ void FmTermKernel(const float* input, int B, int width, int S, int dim, float* logits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B) return;
  const float* row = input + static_cast<size_t>(i) * width;
  float fm = 0.0f;
  for (int k = 0; k < dim; ++k) {
    const float sum = SlotSum(row, S, dim, k);
    float squares = 0.0f;
    for (int s = 0; s < S; ++s) squares = __fadd_rn(squares, __fmul_rn(row[s * dim + k], row[s * dim + k]));
    fm = __fadd_rn(fm, __fadd_rn(__fmul_rn(sum, sum), -squares));
  }
  logits[i] = __fadd_rn(logits[i], __fmul_rn(0.5f, fm));
}

__global__ void FmGradientKernel(const float* input, int B, int width, int S, int dim, const float* dlogits,
                                 float* dinput) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * dim) return;
  const size_t i = idx / dim;
  const int k = static_cast<int>(idx % dim);
  const float* row = input + i * width;
  float* d = dinput + i * width;
  const float sum = SlotSum(row, S, dim, k);
  for (int s = 0; s < S; ++s) {
    d[s * dim + k] = __fadd_rn(d[s * dim + k], __fmul_rn(dlogits[i], __fadd_rn(sum, -row[s * dim + k])));
  }
}

}  // namespace

Status LaunchFmTerm(const float* input, int B, int width, int S, int dim, float* logits, cudaStream_t stream) {
  if (B == 0) return Status::OK();
  FmTermKernel<<<GridFor(B), kBlock, 0, stream>>>(input, B, width, S, dim, logits);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchFmGradient(const float* input, int B, int width, int S, int dim, const float* dlogits, float* dinput,
                        cudaStream_t stream) {
  const size_t n = static_cast<size_t>(B) * dim;
  if (n == 0) return Status::OK();
  FmGradientKernel<<<GridFor(n), kBlock, 0, stream>>>(input, B, width, S, dim, dlogits, dinput);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
