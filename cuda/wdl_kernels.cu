// Wide & Deep's split, wide sum and merge: one thread per float (the sum: per row).
#include "wdl_kernels.cuh"

#include "cuda_check.cuh"

namespace strata::gpu {
namespace {

// The input column of deep column c.
__device__ int InputColumn(WdlShape shape, int c) {
  const int embeddings = shape.S * shape.dim;
  if (c >= embeddings) return shape.S * (shape.dim + 1) + (c - embeddings);
  return (c / shape.dim) * (shape.dim + 1) + c % shape.dim;
}

__global__ void SplitKernel(const float* input, int B, WdlShape shape, float* deep) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const int dw = shape.deep_width();
  if (idx >= static_cast<size_t>(B) * dw) return;
  const size_t i = idx / dw;
  deep[idx] = input[i * shape.input_width() + InputColumn(shape, static_cast<int>(idx % dw))];
}

__global__ void AddWideKernel(const float* input, int B, WdlShape shape, float* logits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B) return;
  const float* x = input + static_cast<size_t>(i) * shape.input_width();
  float wide = 0.0f;
  for (int s = 0; s < shape.S; ++s) wide += x[s * (shape.dim + 1) + shape.dim];
  logits[i] += wide;
}

__global__ void MergeKernel(const float* ddeep, const float* dlogits, int B, WdlShape shape, float* dinput) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const int dw = shape.deep_width(), iw = shape.input_width();
  if (idx >= static_cast<size_t>(B) * iw) return;
  const size_t i = idx / iw;
  const int c = static_cast<int>(idx % iw), rd = shape.dim + 1;
  if (c >= shape.S * rd) {
    dinput[idx] = ddeep[i * dw + shape.S * shape.dim + (c - shape.S * rd)];
  } else if (c % rd == shape.dim) {
    dinput[idx] = dlogits[i];
  } else {
    dinput[idx] = ddeep[i * dw + (c / rd) * shape.dim + c % rd];
  }
}

}  // namespace

Status LaunchWdlSplit(const float* input, int B, WdlShape shape, float* deep, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * shape.deep_width();
  if (total == 0) return Status::OK();
  SplitKernel<<<GridFor(total), kBlock, 0, stream>>>(input, B, shape, deep);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchWdlAddWide(const float* input, int B, WdlShape shape, float* logits, cudaStream_t stream) {
  if (B == 0) return Status::OK();
  AddWideKernel<<<GridFor(B), kBlock, 0, stream>>>(input, B, shape, logits);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status LaunchWdlMerge(const float* ddeep, const float* dlogits, int B, WdlShape shape, float* dinput,
                      cudaStream_t stream) {
  const size_t total = static_cast<size_t>(B) * shape.input_width();
  if (total == 0) return Status::OK();
  MergeKernel<<<GridFor(total), kBlock, 0, stream>>>(ddeep, dlogits, B, shape, dinput);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
