// Optimizer kernels of the CUDA HBM-PS. Every coordinate goes through update_math.h, the
// functions the host backend calls, so both backends apply the same formulas in the same
// order. All pointers are device memory; every call is asynchronous on stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "strata/common/status.h"
#include "strata/model/model_spec.h"
#include "strata/model/update_math.h"

namespace strata::gpu {

// One sparse step on n rows (RowLayoutOf(spec); rows: (n) distinct row pointers; null rows,
// absent keys, are skipped): embedding and state from grads (n, dim) with spec's sparse
// optimizer at rate lr (dim: spec.row_dim()), then freq += counts[i] and last pass = pass.
Status LaunchSparseApply(uint32_t* const* rows, const float* grads, const uint32_t* counts, size_t n,
                         const ModelSpec& spec, float lr, uint32_t pass, cudaStream_t stream);

// Adam on n dense parameters with this step's scalars (MakeAdamStepScalars on the host).
Status LaunchAdamStep(float* params, float* m, float* v, const float* grad, size_t n,
                      const AdamStepScalars& k, cudaStream_t stream);

// SGD on n dense parameters.
Status LaunchSgdStep(float* params, const float* grad, size_t n, float lr, cudaStream_t stream);

}  // namespace strata::gpu
