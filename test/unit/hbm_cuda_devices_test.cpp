// CudaDevicesFor: the devices of a rank's workers by local rank, as listed, shared, and the
// errors that name the flags. Runs without a GPU (a pure function).
#include <doctest/doctest.h>

#include "strata/hbm/cuda_devices.h"

namespace strata {
namespace {

CudaPlacement Place(int workers, std::vector<int> requested, int local_rank, int local_size, int visible) {
  CudaPlacement p;
  const Status st = CudaDevicesFor(workers, requested, local_rank, local_size, visible, &p);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return p;
}

TEST_CASE("hbm: each rank on a node takes its own GPUs when they all fit") {
  CHECK(Place(2, {}, 0, 4, 8).devices == std::vector<int>{0, 1});
  CHECK(Place(2, {}, 3, 4, 8).devices == std::vector<int>{6, 7});
  CHECK_FALSE(Place(2, {}, 3, 4, 8).shared);
  CHECK(DescribePlacement(Place(2, {}, 1, 4, 8)) == "GPU 2, GPU 3");
}

TEST_CASE("hbm: ranks that see only their own GPUs start at device 0") {
  // Slurm's --gpus-per-task: CUDA_VISIBLE_DEVICES shows each rank its own GPU.
  const CudaPlacement p = Place(1, {}, 2, 4, 1);
  CHECK(p.devices == std::vector<int>{0});
  CHECK_FALSE(p.shared);
  CHECK(DescribePlacement(p) == "GPU 0");
}

TEST_CASE("hbm: --cuda-devices places workers as listed, sharing a device named twice") {
  const CudaPlacement p = Place(2, {0, 0}, 0, 1, 1);
  CHECK(p.devices == std::vector<int>{0, 0});
  CHECK(p.shared);
  CHECK(DescribePlacement(p) == "GPU 0, GPU 0 (shared)");
  CHECK_FALSE(Place(2, {1, 0}, 0, 1, 2).shared);
  CHECK(MostWorkersOnOneDevice(Place(3, {0, 1, 0}, 0, 1, 2)) == 2);
  CHECK(MostWorkersOnOneDevice(Place(2, {}, 0, 1, 2)) == 1);
  CHECK(MostWorkersOnOneDevice(CudaPlacement{}) == 0);
}

TEST_CASE("hbm: a placement that cannot be made names the flags") {
  CudaPlacement p;
  Status st = CudaDevicesFor(2, {}, 0, 1, 1, &p);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("--workers-per-rank 2") != std::string::npos);
  CHECK(st.message().find("--cuda-devices") != std::string::npos);
  st = CudaDevicesFor(2, {0}, 0, 1, 1, &p);
  CHECK(st.message().find("--cuda-devices names 1 devices for --workers-per-rank 2") != std::string::npos);
  st = CudaDevicesFor(1, {3}, 0, 1, 2, &p);
  CHECK(st.message().find("device 3 is not visible (2 visible)") != std::string::npos);
}

}  // namespace
}  // namespace strata
