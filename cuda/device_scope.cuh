// DeviceScope: makes a CUDA device current for the calling thread for a scope, and puts
// the previous one back. Thread safety: it changes the calling thread's device alone.
#pragma once

#include <cuda_runtime.h>

namespace strata::gpu {

class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace strata::gpu
