// The wide part of --model wdl on the GPU (strata/model/dense_model.h): an input row holds
// each slot's pooled row (the embedding, then the wide weight) and then the dense features;
// the MLP reads the row without the wide weights (Split), the logit adds the sum of the
// slots' wide weights in slot order (AddWide, the host's order), and the input gradient is
// the MLP's, put back in place, with dlogit for every wide weight (Merge).
// All pointers are device memory; every call is asynchronous on stream.
#pragma once

#include <cuda_runtime.h>

#include "strata/common/status.h"

namespace strata::gpu {

// Shapes: input rows of S * (dim + 1) + nd floats; deep rows of S * dim + nd.
struct WdlShape {
  int S, dim, nd;
  constexpr int input_width() const { return S * (dim + 1) + nd; }
  constexpr int deep_width() const { return S * dim + nd; }
};

// deep (B, deep_width) = the input rows without their wide weights.
Status LaunchWdlSplit(const float* input, int B, WdlShape shape, float* deep, cudaStream_t stream);

// logits[i] += the sum over slots of row i's wide weight.
Status LaunchWdlAddWide(const float* input, int B, WdlShape shape, float* logits, cudaStream_t stream);

// dinput (B, input_width) from ddeep (B, deep_width) and dlogits (B).
Status LaunchWdlMerge(const float* ddeep, const float* dlogits, int B, WdlShape shape, float* dinput,
                      cudaStream_t stream);

}  // namespace strata::gpu
