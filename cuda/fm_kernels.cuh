// The factorization machine's term of --model deepfm on the GPU (strata/model/fm.h): one
// thread per row for the term, one per (row, coordinate) for its gradient, each adding in the
// host's order (slots in order, coordinates in order) with rounded, uncontracted float
// operations (no fused multiply-add), so the floats are the host backend's.
// All pointers are device memory; every call is asynchronous on stream.
#pragma once

#include <cuda_runtime.h>

#include "strata/common/status.h"

namespace strata::gpu {

// logits[i] += fm(row i) for i < B; input rows of `width` floats, the S x dim embeddings first.
Status LaunchFmTerm(const float* input, int B, int width, int S, int dim, float* logits, cudaStream_t stream);

// dinput[i, embeddings] += dlogits[i] * d fm / d e for i < B.
Status LaunchFmGradient(const float* input, int B, int width, int S, int dim, const float* dlogits, float* dinput,
                        cudaStream_t stream);

}  // namespace strata::gpu
