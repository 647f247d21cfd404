// CublasMlp: forward and backward as cuBLAS SGEMM/SGEMV on row-major buffers viewed as
// column-major transposes, with fused bias/ReLU kernels.
#include "mlp_cublas.cuh"

#include <algorithm>
#include <cassert>

#include "strata/model/update_math.h"

namespace strata::gpu {
namespace {

// h (B, n) += bias per column, then ReLU when relu.
__global__ void BiasActKernel(float* h, const float* bias, int B, int n, bool relu) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<size_t>(B) * n) return;
  const float v = h[idx] + bias[idx % n];
  h[idx] = relu && !(v > 0.0f) ? 0.0f : v;
}

// d (count) *= (a > 0): the ReLU's backward on the layer's post-activation a.
__global__ void ReluMaskKernel(const float* a, float* d, size_t count) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx < count && !(a[idx] > 0.0f)) d[idx] = 0.0f;
}

__global__ void FillKernel(float* p, size_t n, float v) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx < n) p[idx] = v;
}

__global__ void LogLossKernel(const float* logits, const float* labels, int B, float scale, float* dlogits,
                              double* losses) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B) return;
  const float z = logits[i], y = labels[i];
  losses[i] = LogitLogLoss(z, y);
  dlogits[i] = LogitLogLossGrad(z, y, scale);
}

}  // namespace

CublasMlp::~CublasMlp() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

Status CublasMlp::Init(int max_batch, cudaStream_t stream) {
  assert(max_batch >= 1);
  stream_ = stream;
  STRATA_CUBLAS_TRY(cublasCreate(&handle_));
  STRATA_CUBLAS_TRY(cublasSetStream(handle_, stream));
  STRATA_CUBLAS_TRY(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  const int last = mlp_.num_layers() - 1;
  int widest = mlp_.output_width();  // a ReLU output's masked gradient takes a scratch buffer too
  act_.resize(last);
  for (int l = 0; l < last; ++l) {
    STRATA_RETURN_IF_ERROR(act_[l].Reserve(static_cast<size_t>(max_batch) * mlp_.fan_out(l)));
    widest = std::max(widest, mlp_.fan_out(l));
  }
  STRATA_RETURN_IF_ERROR(grad_a_.Reserve(static_cast<size_t>(max_batch) * widest));
  STRATA_RETURN_IF_ERROR(grad_b_.Reserve(static_cast<size_t>(max_batch) * widest));
  STRATA_RETURN_IF_ERROR(ones_.Reserve(max_batch));
  FillKernel<<<GridFor(max_batch), kBlock, 0, stream>>>(ones_.get(), max_batch, 1.0f);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status CublasMlp::Forward(const float* params, const float* input, int B, float* logits) {
  const float one = 1.0f, zero = 0.0f;
  const float* a = input;
  const int last = mlp_.num_layers() - 1;
  output_ = logits;
  for (int l = 0; l <= last; ++l) {
    const int in = mlp_.fan_in(l), out = mlp_.fan_out(l);
    float* h = l < last ? act_[l].get() : logits;
    // Column-major: h^T (out, B) = W^T (out, in; ld out) * a^T (in, B; ld in).
    STRATA_CUBLAS_TRY(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, out, B, in, &one, params + mlp_.weight_offset(l),
                                  out, a, in, &zero, h, out));
    BiasActKernel<<<GridFor(static_cast<size_t>(B) * out), kBlock, 0, stream_>>>(h, params + mlp_.bias_offset(l), B,
                                                                                 out, l < mlp_.relu_layers());
    STRATA_CUDA_LAUNCHED();
    a = h;
  }
  return Status::OK();
}

Status CublasMlp::Backward(const float* params, const float* input, int B, const float* dlogits, float* dparams,
                           float* dinput) {
  const float one = 1.0f, zero = 0.0f;
  const int last = mlp_.num_layers() - 1;
  const float* dz = dlogits;  // dLoss/dpre-activation of layer l, (B, fan_out(l))
  float* spare = grad_a_.get();
  float* other = grad_b_.get();
  if (mlp_.relu_layers() == mlp_.num_layers()) {  // a ReLU output: mask its gradient first
    const size_t count = static_cast<size_t>(B) * mlp_.output_width();
    STRATA_CUDA_TRY(cudaMemcpyAsync(other, dlogits, count * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
    ReluMaskKernel<<<GridFor(count), kBlock, 0, stream_>>>(output_, other, count);
    STRATA_CUDA_LAUNCHED();
    dz = other;
  }
  for (int l = last; l >= 0; --l) {
    const int in = mlp_.fan_in(l), out = mlp_.fan_out(l);
    const float* a = l == 0 ? input : act_[l - 1].get();
    const float* w = params + mlp_.weight_offset(l);
    // dW (in, out) row-major = a^T dz; column-major dW^T (out, in) = dz^T (out, B) * a (B, in).
    STRATA_CUBLAS_TRY(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, out, in, B, &one, dz, out, a, in, &zero,
                                  dparams + mlp_.weight_offset(l), out));
    // db (out) = column sums of dz: dz^T (out, B) * ones (B).
    STRATA_CUBLAS_TRY(cublasSgemv(handle_, CUBLAS_OP_N, out, B, &one, dz, out, ones_.get(), 1, &zero,
                                  dparams + mlp_.bias_offset(l), 1));
    float* da = l == 0 ? dinput : spare;
    if (da == nullptr) break;
    // da (B, in) row-major = dz W^T; column-major da^T (in, B) = W (in, out) * dz^T (out, B).
    STRATA_CUBLAS_TRY(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, in, B, out, &one, w, out, dz, out, &zero, da, in));
    if (l == 0) break;
    const size_t count = static_cast<size_t>(B) * in;
    ReluMaskKernel<<<GridFor(count), kBlock, 0, stream_>>>(a, da, count);
    STRATA_CUDA_LAUNCHED();
    dz = da;
    std::swap(spare, other);
  }
  return Status::OK();
}

Status LaunchLogLoss(const float* logits, const float* labels, int B, float scale, float* dlogits, double* losses,
                     cudaStream_t stream) {
  if (B == 0) return Status::OK();
  LogLossKernel<<<GridFor(B), kBlock, 0, stream>>>(logits, labels, B, scale, dlogits, losses);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
