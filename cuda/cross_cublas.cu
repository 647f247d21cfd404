// CublasCrossNet: the cross layers as cuBLAS products and elementwise kernels.
#include "cross_cublas.cuh"

namespace strata::gpu {
namespace {

// y (B, w) += bias per column; out = x0 * y + x.
__global__ void CrossOutKernel(const float* x0, const float* x, const float* bias, size_t count, int w, float* y,
                               float* out) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= count) return;
  const float v = y[idx] + bias[idx % w];
  y[idx] = v;
  out[idx] = x0[idx] * v + x[idx];
}

// dy = g * x0; dx0 += g * y.
__global__ void CrossGradKernel(const float* g, const float* x0, const float* y, size_t count, float* dy,
                                float* dx0) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= count) return;
  dy[idx] = g[idx] * x0[idx];
  dx0[idx] += g[idx] * y[idx];
}

// a (count) += b.
__global__ void AddKernel(const float* b, size_t count, float* a) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx < count) a[idx] += b[idx];
}

}  // namespace

Status RowGemm(cublasHandle_t handle, bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B,
               bool accumulate, float* C) {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  // Column-major: C^T (N, M) = op(B)^T (N, K) * op(A)^T (K, M).
  STRATA_CUBLAS_TRY(cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M,
                                K, &one, B, trans_b ? K : N, A, trans_a ? M : K, &beta, C, N));
  return Status::OK();
}

Status CublasCrossNet::Init(int max_batch, cublasHandle_t handle, cudaStream_t stream, const float* ones) {
  handle_ = handle;
  stream_ = stream;
  rank_ = net_.rank();
  const size_t n = static_cast<size_t>(max_batch) * net_.width();
  x_.resize(net_.num_layers());
  y_.resize(net_.num_layers());
  t_.resize(rank_ > 0 ? net_.num_layers() : 0);
  for (auto& b : x_) STRATA_RETURN_IF_ERROR(b.Reserve(n));
  for (auto& b : y_) STRATA_RETURN_IF_ERROR(b.Reserve(n));
  for (auto& b : t_) STRATA_RETURN_IF_ERROR(b.Reserve(static_cast<size_t>(max_batch) * rank_));
  STRATA_RETURN_IF_ERROR(g_.Reserve(n));
  STRATA_RETURN_IF_ERROR(dy_.Reserve(n));
  STRATA_RETURN_IF_ERROR(dt_.Reserve(static_cast<size_t>(max_batch) * (rank_ > 0 ? rank_ : 1)));
  ones_ = ones;
  return Status::OK();
}

Status CublasCrossNet::Forward(const float* params, const float* x0, int B, const float** out) {
  const int w = net_.width();
  const size_t count = static_cast<size_t>(B) * w;
  for (int l = 0; l < net_.num_layers(); ++l) {
    const float* x = LayerInput(x0, l);
    const float* p = params + net_.Offset(l);
    float* y = y_[l].get();
    if (rank_ == 0) {
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, false, false, B, w, w, x, p, false, y));
    } else {
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, false, false, B, rank_, w, x, p, false, t_[l].get()));
      STRATA_RETURN_IF_ERROR(
          RowGemm(handle_, false, false, B, w, rank_, t_[l].get(), p + static_cast<size_t>(w) * rank_, false, y));
    }
    CrossOutKernel<<<GridFor(count), kBlock, 0, stream_>>>(x0, x, params + net_.BiasOffset(l), count, w, y,
                                                            x_[l].get());
    STRATA_CUDA_LAUNCHED();
  }
  *out = x_.back().get();
  return Status::OK();
}

Status CublasCrossNet::Backward(const float* params, const float* x0, int B, const float* dout, float* dparams,
                                float* dx0) {
  const int w = net_.width();
  const size_t count = static_cast<size_t>(B) * w;
  const float one = 1.0f, zero = 0.0f;
  float* g = g_.get();  // dLoss/dx_{l+1}, then dLoss/dx_l
  float* dy = dy_.get();
  STRATA_CUDA_TRY(cudaMemcpyAsync(g, dout, count * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  STRATA_CUDA_TRY(cudaMemsetAsync(dx0, 0, count * sizeof(float), stream_));
  for (int l = net_.num_layers() - 1; l >= 0; --l) {
    const float* x = LayerInput(x0, l);
    const float* p = params + net_.Offset(l);
    float* dp = dparams + net_.Offset(l);
    CrossGradKernel<<<GridFor(count), kBlock, 0, stream_>>>(g, x0, y_[l].get(), count, dy, dx0);
    STRATA_CUDA_LAUNCHED();
    // db (w) = column sums of dy: dy^T (w, B; column-major view) * ones (B).
    STRATA_CUBLAS_TRY(cublasSgemv(handle_, CUBLAS_OP_N, w, B, &one, dy, w, ones_, 1, &zero,
                                  dparams + net_.BiasOffset(l), 1));
    if (rank_ == 0) {
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, true, false, w, w, B, x, dy, false, dp));
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, false, true, B, w, w, dy, p, true, g));
    } else {
      const float* v = p + static_cast<size_t>(w) * rank_;
      float* dt = dt_.get();
      STRATA_RETURN_IF_ERROR(
          RowGemm(handle_, true, false, rank_, w, B, t_[l].get(), dy, false, dp + static_cast<size_t>(w) * rank_));
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, false, true, B, rank_, w, dy, v, false, dt));
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, true, false, w, rank_, B, x, dt, false, dp));
      STRATA_RETURN_IF_ERROR(RowGemm(handle_, false, true, B, w, rank_, dt, p, true, g));
    }
  }
  AddKernel<<<GridFor(count), kBlock, 0, stream_>>>(g, count, dx0);  // x_0 is also layer 0's residual
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

}  // namespace strata::gpu
