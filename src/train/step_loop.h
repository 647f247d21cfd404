// StepLoop: the global steps of one pass. Per step every local worker computes its
// gradients (concurrently, on the thread pool), the sparse gradients are summed job-wide by
// the exchange and the dense ones by the DenseReducer (or on the devices, over NCCL, when
// the backend's are connected: HbmPs::ConnectDevices), both in global worker order, and
// every rank applies the same sums to its replicas. A worker whose chunk ran out before
// the pass did contributes an empty batch. A job of one worker has nothing to sum: its
// steps are HbmPs::TrainAlone, told which batch comes next, which may keep the gradients
// on the device. Every call is a collective on the Comm given; errors are agreed on, but
// those of the devices' collectives, which end the rank. Not thread-safe: the Train
// stage's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/comm/param_exchange.h"
#include "strata/common/thread_pool.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/lr_schedule.h"
#include "train/pass_data.h"

namespace strata {

class StepLoop {
 public:
  // REQUIRES: every argument outlives the loop. workers: W of the job.
  StepLoop(Comm* comm, ParamExchange* exchange, HbmPs* hbm, ThreadPool* pool, int workers, int batch_size,
           int num_slots, int num_dense, const LrSchedule& schedule);

  // Runs the pass's steps on hbm's active tables, the first being global step first_step
  // (the learning rates follow the schedule by global step); adds this rank's examples and
  // loss.
  Status Run(const PassData& pass, int64_t first_step, int64_t* examples, double* loss_sum);

  // The dense reduction's share of the lower bound of bytes sent (DenseReducer), wherever
  // the sums were made.
  uint64_t dense_lower_bound_bytes() const { return dense_.lower_bound_bytes() + device_lower_bound_; }

 private:
  Status ComputeAll(const PassData& pass, int64_t step);
  Status Apply(const PassRouting& routing, int64_t* examples, double* loss_sum);
  Status TrainAlone(const PassData& pass, int64_t step, int64_t* examples, double* loss_sum);
  void SumDenseOnDevices();  // HbmPs::SumAndApplyDense; its error ends the process
  [[noreturn]] static void EndRank(const char* what, const Status& error);

  Comm* comm_;
  ParamExchange* exchange_;
  HbmPs* hbm_;
  ThreadPool* pool_;
  const float scale_;  // 1 / global batch
  const LrSchedule schedule_;
  Batch empty_;
  DenseReducer dense_;
  // Per step, kept across steps to avoid reallocation.
  std::vector<WorkerGrads> grads_;
  std::vector<Status> status_;
  std::vector<float> dense_sum_;
  std::vector<uint64_t> keys_;
  std::vector<float> sparse_sum_;
  std::vector<uint32_t> counts_;
  const bool alone_;  // the job has one worker
  uint64_t device_lower_bound_ = 0;  // the lower bound of the dense sums made on the devices
};

}  // namespace strata
