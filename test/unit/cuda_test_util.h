// Shared by the CUDA backend's tests: they skip, with one line, where no GPU is visible.
#pragma once

#include <doctest/doctest.h>

#include "strata/hbm/hbm_ps.h"

namespace strata {

inline bool NoGpu() {
  if (CudaDeviceCount() > 0) return false;
  MESSAGE("no CUDA device visible: skipping");
  return true;
}

}  // namespace strata
