// CudaDevicesFor: which CUDA device each of a rank's G workers trains on. Pure function of
// its arguments (no CUDA calls), so it is tested without a GPU. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata {

struct CudaPlacement {
  std::vector<int> devices;  // worker g trains on devices[g]
  bool shared = false;       // a device serves more than one worker of this rank
};

// requested: --cuda-devices (one device a worker; empty: choose). Otherwise, when the node's
// ranks together fit on the visible devices (local_size * G <= visible), local rank r takes
// devices [r*G, r*G + G), so two ranks on a node never share a GPU by accident; when only G
// are visible (Slurm's --gpus-per-task gives each rank its own through CUDA_VISIBLE_DEVICES,
// or ranks share one machine's GPUs on purpose), devices [0, G). InvalidArgument naming
// --workers-per-rank and --cuda-devices when neither fits.
Status CudaDevicesFor(int workers, const std::vector<int>& requested, int local_rank, int local_size, int visible,
                      CudaPlacement* out);

// The most workers of the placement on one device (1 when none share; 0 when empty).
int MostWorkersOnOneDevice(const CudaPlacement& placement);

// "GPU 0, GPU 1" (with " (shared)" when a device serves several of the rank's workers).
std::string DescribePlacement(const CudaPlacement& placement);

}  // namespace strata
