// CUDA and cuBLAS return codes as Status values, at the wrapper that calls them. Every
// failure becomes a DeviceError naming the source file, line and the failing call, so a
// user sees "cuda/hash_table.cu:88: cudaMalloc(...): out of memory" rather than an abort.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "strata/common/status.h"

namespace strata::gpu {

// A failed call leaves its error as the thread's last error too (cudaGetLastError), where
// the next launch check would report it again; a failure reported here is taken from there.
inline Status CudaStatus(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return Status::OK();
  cudaGetLastError();
  return Status::DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                             cudaGetErrorString(e));
}

inline Status CublasStatus(cublasStatus_t e, const char* call, const char* file, int line) {
  if (e == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return Status::DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                             cublasGetStatusString(e));
}

// Threads per block of the project's elementwise kernels, and the grid that covers n.
inline constexpr int kBlock = 256;
inline unsigned GridFor(size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

}  // namespace strata::gpu

#define STRATA_CUDA_TRY(expr) \
  STRATA_RETURN_IF_ERROR(::strata::gpu::CudaStatus((expr), #expr, __FILE__, __LINE__))
#define STRATA_CUBLAS_TRY(expr) \
  STRATA_RETURN_IF_ERROR(::strata::gpu::CublasStatus((expr), #expr, __FILE__, __LINE__))
// A kernel launch's configuration error, checked right after the <<<...>>> line.
#define STRATA_CUDA_LAUNCHED() STRATA_CUDA_TRY(cudaGetLastError())
