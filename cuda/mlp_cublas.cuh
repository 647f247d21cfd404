// CublasMlp: the dense tower of the CTR model on one GPU, in the parameter layout of
// model/mlp.h (W_l (in, out) row-major, then b_l, layer by layer). Row-major products are
// issued to column-major cuBLAS as their transposes: the row-major (B, out) activation is
// the column-major (out, B) matrix W^T X^T, so no data is ever transposed. Bias and ReLU
// are fused elementwise kernels; the bias gradient is a GEMV against a ones vector.
// Also the batch's sigmoid cross-entropy through update_math.h.
//
// Device pointers throughout; calls are asynchronous on the stream given to Init. The
// cuBLAS handle runs in CUBLAS_DEFAULT_MATH (full FP32, no TF32), so results differ from
// OpenBLAS only by the order of the sums. Thread safety: one owner; not thread-safe.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "device_buffer.cuh"
#include "strata/model/mlp.h"

namespace strata::gpu {

class CublasMlp {
 public:
  explicit CublasMlp(const Mlp& mlp) : mlp_(mlp) {}
  ~CublasMlp();
  CublasMlp(const CublasMlp&) = delete;
  CublasMlp& operator=(const CublasMlp&) = delete;

  // Creates the cuBLAS handle on the current device, bound to stream, and scratch for
  // batches of up to max_batch rows.
  Status Init(int max_batch, cudaStream_t stream);
  // The handle Init made, for other products of the worker on its stream.
  cublasHandle_t handle() const { return handle_; }
  // (max_batch) ones on the device, for other bias gradients of the worker.
  const float* ones() const { return ones_.get(); }

  // logits (B, output_width) = MLP(input (B, input_width)): the logit, or a ReLU output
  // (Mlp::Output::kRelu, DLRM's bottom MLP). Keeps activations, and where logits is, for a
  // following Backward. REQUIRES: 1 <= B <= max_batch.
  Status Forward(const float* params, const float* input, int B, float* logits);

  // dparams (num_params, overwritten) and dinput (B, input_width, overwritten) from
  // dlogits (B, output_width). REQUIRES: the last Forward was on the same params, input
  // and B, and its output is unchanged.
  Status Backward(const float* params, const float* input, int B, const float* dlogits, float* dparams,
                  float* dinput);

 private:
  Mlp mlp_;
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::vector<DeviceBuffer<float>> act_;  // hidden layer l: (max_batch, fan_out(l)), post-ReLU
  const float* output_ = nullptr;         // the last Forward's output (the caller's buffer)
  DeviceBuffer<float> grad_a_, grad_b_;   // (max_batch, widest hidden) gradient ping-pong
  DeviceBuffer<float> ones_;              // (max_batch) ones, for the bias gradient
};

// losses (B, double) = LogitLogLoss(logits, labels) and dlogits (B) =
// LogitLogLossGrad(logits, labels, scale). Asynchronous on stream.
Status LaunchLogLoss(const float* logits, const float* labels, int B, float scale, float* dlogits,
                     double* losses, cudaStream_t stream);

}  // namespace strata::gpu
