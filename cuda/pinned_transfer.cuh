// PinnedUploads and PinnedDownloads: the copies of one HBM-PS call between host memory and
// device buffers, gathered into one PinnedBuffer so that they are queued without blocking
// the host and waited for once. An upload copies its host regions into the pinned buffer
// when it is issued, so the caller's memory is free on return; the pinned buffer is in use
// until the stream has passed the copies (the caller synchronizes before reusing it). A
// download's values are read from the pinned buffer, at the offset Add returned, after the
// stream is synchronized. Not thread-safe; one per worker.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "device_buffer.cuh"
#include "pinned_buffer.cuh"

namespace strata::gpu {

class PinnedUploads {
 public:
  // Queues n elements from host into dst (reserved here).
  template <typename T>
  Status Add(const T* host, size_t n, DeviceBuffer<T>* dst) {
    STRATA_RETURN_IF_ERROR(dst->Reserve(n));
    copies_.push_back({host, dst->get(), n * sizeof(T), layout_.Take<T>(n)});
    return Status::OK();
  }

  // Copies the regions into pinned (grown as needed) and queues their uploads on stream.
  Status Issue(PinnedBuffer* pinned, cudaStream_t stream) {
    STRATA_RETURN_IF_ERROR(pinned->Reserve(layout_.bytes()));
    for (const Copy& c : copies_) {
      if (c.bytes == 0) continue;
      std::memcpy(pinned->At<uint8_t>(c.at), c.host, c.bytes);
      STRATA_CUDA_TRY(cudaMemcpyAsync(c.device, pinned->At<uint8_t>(c.at), c.bytes, cudaMemcpyHostToDevice, stream));
    }
    return Status::OK();
  }

 private:
  struct Copy {
    const void* host;
    void* device;
    size_t bytes;
    size_t at;
  };
  std::vector<Copy> copies_;
  PinnedLayout layout_;
};

class PinnedDownloads {
 public:
  // Queues n elements from device; returns where they will be in the pinned buffer.
  template <typename T>
  size_t Add(const T* device, size_t n) {
    const size_t at = layout_.Take<T>(n);
    copies_.push_back({device, n * sizeof(T), at});
    return at;
  }

  // Grows pinned as needed and queues the downloads on stream.
  Status Issue(PinnedBuffer* pinned, cudaStream_t stream) {
    STRATA_RETURN_IF_ERROR(pinned->Reserve(layout_.bytes()));
    for (const Copy& c : copies_) {
      if (c.bytes == 0) continue;
      STRATA_CUDA_TRY(cudaMemcpyAsync(pinned->At<uint8_t>(c.at), c.device, c.bytes, cudaMemcpyDeviceToHost, stream));
    }
    return Status::OK();
  }

 private:
  struct Copy {
    const void* device;
    size_t bytes;
    size_t at;
  };
  std::vector<Copy> copies_;
  PinnedLayout layout_;
};

}  // namespace strata::gpu
