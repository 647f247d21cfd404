// Pooling kernels of the CUDA HBM-PS: the sum-pooled MLP input of a batch from its
// gathered embeddings, and the backward scatter of the input gradient into one gradient
// per distinct key. Both add in the host backend's order (occurrences in ascending batch
// position, starting from zero), so with equal inputs they produce the same floats, but
// for the scatter of a key of more than 64 occurrences in a batch, which adds in a fixed
// order of its own (32 strided partial sums, then a tree).
// All pointers are device memory; every call is asynchronous on stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "strata/common/status.h"

namespace strata::gpu {

// input (B, S*dim + nd): per example i and slot s, the sum over the slot's occurrences j
// (offsets, CSR over (i, s)) of emb[local[j]] (emb: (k, dim)), then the dense features
// dense (B, nd). Overwrites every element of input.
Status LaunchPool(const uint32_t* offsets, const uint32_t* local, const float* emb, const float* dense,
                  int B, int S, int dim, int nd, float* input, cudaStream_t stream);

// Mean pooling (strata/model/pooling.h): x (B, width), slot s of example i scaled by
// MeanScale(its key count) where mean[s] (device, S flags) is set.
Status LaunchScaleMeanSlots(const uint32_t* offsets, const uint8_t* mean, int B, int S, int dim, int width, float* x,
                            cudaStream_t stream);

// grads (k, dim): for distinct key l, the sum over its occurrences t in
// [key_start[l], key_start[l] + counts[l]) (sorted order) of dinput[sorted_base[t] + d].
// Deterministic: the same inputs give the same floats.
Status LaunchScatter(const uint32_t* key_start, const uint32_t* counts, const uint32_t* sorted_base,
                     const float* dinput, size_t k, int dim, float* grads, cudaStream_t stream);

}  // namespace strata::gpu
