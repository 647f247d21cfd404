// CudaDevicesFor (cuda_devices.h): the device choice of a rank's workers.
#include "strata/hbm/cuda_devices.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace strata {

Status CudaDevicesFor(int workers, const std::vector<int>& requested, int local_rank, int local_size, int visible,
                      CudaPlacement* out) {
  out->devices.clear();
  if (!requested.empty()) {
    if (static_cast<int>(requested.size()) != workers) {
      return Status::InvalidArgument(fmt::format("--cuda-devices names {} devices for --workers-per-rank {}; name one a worker",
                                                 requested.size(), workers));
    }
    for (int d : requested) {
      if (d >= visible) {
        return Status::InvalidArgument(fmt::format("--cuda-devices: device {} is not visible ({} visible)", d, visible));
      }
    }
    out->devices = requested;
    out->shared = std::set<int>(requested.begin(), requested.end()).size() < requested.size();
    return Status::OK();
  }
  int first = 0;
  if (static_cast<int64_t>(local_size) * workers <= visible) {
    first = local_rank * workers;
  } else if (workers > visible) {
    return Status::InvalidArgument(fmt::format(
        "--workers-per-rank {} needs {} GPUs a rank and {} are visible; name the devices to share with --cuda-devices",
        workers, workers, visible));
  }
  for (int g = 0; g < workers; ++g) out->devices.push_back(first + g);
  out->shared = false;
  return Status::OK();
}

int MostWorkersOnOneDevice(const CudaPlacement& placement) {
  int most = 0;
  for (int d : placement.devices) {
    most = std::max(most, static_cast<int>(std::count(placement.devices.begin(), placement.devices.end(), d)));
  }
  return most;
}

std::string DescribePlacement(const CudaPlacement& placement) {
  std::string text;
  for (int d : placement.devices) text += fmt::format("{}GPU {}", text.empty() ? "" : ", ", d);
  return placement.shared ? text + " (shared)" : text;
}

}  // namespace strata
