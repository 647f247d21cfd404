// DLRM's dot interaction on the GPU (strata/model/dot_interaction.h) and the moves of the
// dense features between an input row and the bottom MLP. The interaction's forward runs a
// thread per output float, its backward a thread per (row, vector, coordinate) that adds
// the pairs in the host's order, with uncontracted float operations, so the floats are
// the host backend's. All pointers are device memory; every call is asynchronous on stream.
#pragma once

#include <cuda_runtime.h>

#include "strata/common/status.h"

namespace strata::gpu {

// A row's vectors: z (the bottom MLP's output, when bottom) then the S slot embeddings,
// each dim wide; input rows are input_width wide, the S * dim embeddings first.
struct DotShape {
  int S, dim, input_width;
  bool bottom;
  constexpr int vectors() const { return S + (bottom ? 1 : 0); }
  constexpr int output_width() const { return (bottom ? dim : 0) + vectors() * (vectors() - 1) / 2; }
};

// out (B, output_width) = [z, <v_a, v_b> for a < b]; z (B, dim) or null without bottom.
Status LaunchDotForward(const float* input, const float* z, int B, DotShape shape, float* out, cudaStream_t stream);

// From dout (B, output_width): adds d/de to dinput's embedding columns and writes d/dz to
// dz (B, dim) when bottom.
Status LaunchDotBackward(const float* input, const float* z, int B, DotShape shape, const float* dout, float* dinput,
                         float* dz, cudaStream_t stream);

// dense (B, nd) = the input rows' nd columns from `first`; and back (ScatterDense overwrites).
Status LaunchGatherDense(const float* input, int B, int input_width, int first, int nd, float* dense,
                         cudaStream_t stream);
Status LaunchScatterDense(const float* dense, int B, int input_width, int first, int nd, float* input,
                          cudaStream_t stream);

}  // namespace strata::gpu
