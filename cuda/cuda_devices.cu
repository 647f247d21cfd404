// The CUDA devices a rank sees (strata/hbm/hbm_ps.h): how many, their least free memory,
// their names. Each call clears the error a failed CUDA query leaves, so a machine without
// a driver or a GPU reads as zero devices. Thread-safe: each call is a few runtime queries.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "device_scope.cuh"
#include "strata/hbm/hbm_ps.h"

namespace strata {

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "no driver" error
    return 0;
  }
  return n;
}

int64_t CudaMinFreeBytes(const std::vector<int>& devices) {
  const int visible = CudaDeviceCount();
  int64_t least = -1;
  for (int d : devices) {
    if (d < 0 || d >= visible) return 0;
    gpu::DeviceScope scope(d);
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    least = least < 0 ? static_cast<int64_t>(free) : std::min(least, static_cast<int64_t>(free));
  }
  return std::max<int64_t>(least, 0);
}

std::string CudaDeviceName(int device) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown";
  }
  return prop.name;
}

}  // namespace strata
