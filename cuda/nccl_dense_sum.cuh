// NcclDenseSum: the job-wide sum of the workers' dense gradients, on the GPUs, over the
// job's NcclComm. The sum is DenseReducer's (strata/comm/param_exchange.h) bitwise: every
// coordinate is summed over the job's workers in global worker order (rank q's worker g is
// worker q G + g), starting from worker 0's value, so it does not depend on how the
// workers are split into ranks. The vector is cut into R slices of ceil(n / R); rank r
// sums slice r:
//   pack      slice r of each local worker, worker by worker, into part r (peer copies
//             from the workers' GPUs);
//   exchange  part r to rank r, in one NCCL group of sends and receives;
//   sum       this rank's slice of the W gradients, in worker order (one kernel);
//   gather    the R summed slices to every rank (NCCL all-gather, in place).
//
// Thread safety: one thread at a time, the communicator's only user meanwhile. Sum is a
// collective over the job's ranks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "device_buffer.cuh"
#include "nccl_comm.cuh"
#include "strata/common/status.h"

namespace strata::gpu {

class NcclDenseSum {
 public:
  // n: floats of a dense gradient; workers: G, the workers of every rank. REQUIRES: comm
  // outlives this.
  NcclDenseSum(NcclComm* comm, size_t n, int workers);

  // The device buffers, on comm's device.
  Status Init();

  // grads[g]: worker g's gradient (n floats) on devices[g], complete. Queues the pack,
  // exchange, sum and gather on stream (of comm's device) and waits for them; sum() then
  // holds the job-wide sum until the next call.
  Status Sum(const std::vector<const float*>& grads, const std::vector<int>& devices, cudaStream_t stream);
  const float* sum() const { return sum_.get(); }

 private:
  size_t SliceLength(int r) const;  // floats of slice r (the last ones may be short or empty)
  Status Pack(const std::vector<const float*>& grads, const std::vector<int>& devices, cudaStream_t stream);
  Status Exchange(cudaStream_t stream);

  NcclComm* comm_;
  const size_t n_;
  const int workers_;
  const size_t slice_;  // ceil(n / R)
  DeviceBuffer<float> packed_;    // (R, G, slice): part r holds G slices of rank r's length
  DeviceBuffer<float> received_;  // (W, slice of this rank): the job's workers in order
  DeviceBuffer<float> sum_;       // (R * slice): the gathered sums; the first n are the sum
};

}  // namespace strata::gpu
