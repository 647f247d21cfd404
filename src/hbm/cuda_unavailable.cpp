// The CUDA backend's entry points in a build without nvcc: no devices, and a clear error.
#ifndef STRATA_WITH_CUDA
#include "strata/hbm/hbm_ps.h"

namespace strata {

int CudaDeviceCount() { return 0; }

int64_t CudaMinFreeBytes(const std::vector<int>&) { return 0; }

std::string CudaDeviceName(int) { return "unknown"; }

Status NewCudaHbmPs(const HbmOptions&, std::unique_ptr<HbmPs>*) {
  return Status::DeviceError("--device cuda: this strata-train was built without CUDA (no nvcc at build time)");
}

}  // namespace strata
#endif
