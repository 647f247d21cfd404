// CublasCrossNet: DCN-v2's cross layers (strata/model/cross_net.h) on one GPU, in the host
// CrossNet's parameter layout and formulas; row-major products are issued to cuBLAS as
// their column-major transposes (RowGemm), and the elementwise parts (bias, x0 * y + x, and
// their gradients) are kernels. The bias gradient is a GEMV against ones, so it sums the
// rows in cuBLAS's order, not the host's row order.
//
// Device pointers throughout; calls are asynchronous on the stream of the cuBLAS handle
// given to Init. Thread safety: one owner; not thread-safe.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "device_buffer.cuh"
#include "strata/model/cross_net.h"

namespace strata::gpu {

// C (M, N) = op(A) (M, K) * op(B) (K, N), plus C when accumulate; row-major, op = transpose
// when the flag is set (A then stored (K, M), B (N, K)).
Status RowGemm(cublasHandle_t handle, bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B,
               bool accumulate, float* C);

class CublasCrossNet {
 public:
  explicit CublasCrossNet(const CrossNet& net) : net_(net) {}

  // Scratch for batches of up to max_batch rows; handle: the worker's, bound to stream;
  // ones: (max_batch) ones on the device, which outlive this (CublasMlp::ones).
  Status Init(int max_batch, cublasHandle_t handle, cudaStream_t stream, const float* ones);

  // The last layer's output x_L (B, width), valid until the next Forward.
  Status Forward(const float* params, const float* x0, int B, const float** out);

  // dparams (num_params, overwritten) and dx0 (B, width, overwritten) from dout =
  // dLoss/dx_L (B, width). REQUIRES: the last Forward had these params, x0 and B.
  Status Backward(const float* params, const float* x0, int B, const float* dout, float* dparams, float* dx0);

 private:
  const float* LayerInput(const float* x0, int l) const { return l == 0 ? x0 : x_[l - 1].get(); }

  CrossNet net_;
  int rank_ = 0;
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::vector<DeviceBuffer<float>> x_, y_, t_;  // per layer: output, x W + b, low rank x U
  DeviceBuffer<float> g_, dy_, dt_;
  const float* ones_ = nullptr;  // borrowed
};

}  // namespace strata::gpu
