// DeviceBuffer<T>: an owned, grow-only allocation in the current device's memory, plus
// stream-ordered copies between it and host memory, and OwnedStream, an owned stream.
// Growing discards the contents; the buffer is freed on the device it was allocated on (the
// caller keeps that device current when destroying, as CudaHbmPs does). Not thread-safe;
// one owner.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cuda_check.cuh"

namespace strata::gpu {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}

  // Ensures room for n elements (at least one), growing by half again at least, so that a
  // per-batch buffer settles after a few batches instead of reallocating at every new
  // maximum. Contents are lost when it grows.
  Status Reserve(size_t n) {
    if (n <= capacity_ && ptr_ != nullptr) return Status::OK();
    return Allocate(std::max(n, capacity_ + capacity_ / 2));
  }

  // Ensures room for exactly n elements when it must grow (tables sized by a plan).
  Status ReserveExact(size_t n) {
    if (n <= capacity_ && ptr_ != nullptr) return Status::OK();
    return Allocate(n);
  }

  T* get() const { return ptr_; }
  size_t capacity() const { return capacity_; }

 private:
  Status Allocate(size_t n) {
    if (ptr_ != nullptr) STRATA_CUDA_TRY(cudaFree(ptr_));
    ptr_ = nullptr;
    capacity_ = 0;
    const size_t want = std::max<size_t>(n, 1);
    STRATA_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&ptr_), want * sizeof(T)));
    capacity_ = want;
    return Status::OK();
  }

  T* ptr_ = nullptr;
  size_t capacity_ = 0;
};

// Owns a non-blocking CUDA stream made on the current device (Create); destroys it last
// among what was declared after it, so handles bound to it (cuBLAS) go first.
class OwnedStream {
 public:
  OwnedStream() = default;
  ~OwnedStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;

  Status Create() {
    STRATA_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return Status::OK();
  }
  operator cudaStream_t() const { return stream_; }  // NOLINT: used where a stream is

 private:
  cudaStream_t stream_ = nullptr;
};

// Reserves n elements and copies them from host memory, ordered on stream.
template <typename T>
Status Upload(const T* host, size_t n, cudaStream_t stream, DeviceBuffer<T>* dst) {
  STRATA_RETURN_IF_ERROR(dst->Reserve(n));
  if (n == 0) return Status::OK();
  STRATA_CUDA_TRY(cudaMemcpyAsync(dst->get(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  return Status::OK();
}

// Copies n elements from device memory to host memory, ordered on stream.
template <typename T>
Status Download(const T* device, size_t n, cudaStream_t stream, T* host) {
  if (n == 0) return Status::OK();
  STRATA_CUDA_TRY(cudaMemcpyAsync(host, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  return Status::OK();
}

}  // namespace strata::gpu
