// PinnedBuffer: a grow-only allocation of page-locked host memory, the host side of the
// HBM-PS's asynchronous copies (a copy from pageable memory blocks the host and is staged
// by the driver). Regions of one buffer are laid out by PinnedLayout. Growing discards
// the contents. The caller makes sure no queued copy still uses the memory when it writes
// or grows it (a stream synchronization, or an event it keeps). Not thread-safe; one owner.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda_check.cuh"

namespace strata::gpu {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { Release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // Ensures room for `bytes`, growing by half again at least.
  Status Reserve(size_t bytes) {
    if (bytes <= capacity_ && data_ != nullptr) return Status::OK();
    Release();
    const size_t want = std::max({bytes, capacity_ + capacity_ / 2, size_t{4096}});
    STRATA_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&data_), want));
    capacity_ = want;
    return Status::OK();
  }

  // Gives the memory back (between passes, so a large pass's staging does not stay).
  void Release() {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  template <typename T>
  T* At(size_t byte_offset) const {
    return reinterpret_cast<T*>(data_ + byte_offset);
  }
  size_t capacity() const { return capacity_; }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// Lays out regions one after another, each at a 64-byte boundary.
class PinnedLayout {
 public:
  // The offset of a new region of n elements of T.
  template <typename T>
  size_t Take(size_t n) {
    const size_t at = end_;
    end_ = (end_ + n * sizeof(T) + 63) / 64 * 64;
    return at;
  }
  size_t bytes() const { return end_; }

 private:
  size_t end_ = 0;
};

}  // namespace strata::gpu
