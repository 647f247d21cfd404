// SetUpJob: what a training job builds before its first pass, from the flags: the thread
// pool, the HBM-PS backend, the rank's shard server over its row stores, and the input
// plans (rank 0 expands the globs and plans the shards; every rank receives the same
// plan). Rank 0 prints the start-up line. A collective; errors are agreed on.
#pragma once

#include <memory>

#include "strata/comm/comm.h"
#include "strata/common/dir_lock.h"
#include "strata/common/thread_pool.h"
#include "strata/data/shard_plan.h"
#include "strata/hbm/cuda_devices.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/ps/shard_server.h"
#include "strata/train/options.h"
#include "train/pass_reader.h"

namespace strata {

struct JobParts {
  int threads = 1;    // CPU threads of this rank
  int workers = 1;    // W of the job
  std::unique_ptr<ThreadPool> pool;  // one thread per local worker, at most `threads`
  std::unique_ptr<HbmPs> hbm;
  std::unique_ptr<ShardServer> server;
  ShardPlan train_plan, eval_plan;
  bool has_eval = false;
  std::unique_ptr<DirLock> checkpoint_lock;  // rank 0's claim on --checkpoint-dir
  int64_t planned_dram_bytes = 0;  // this rank's DRAM plan, after PlanJobMemory
  DensePrecision dense_precision = DensePrecision::kFp32;  // what the backend computes in
  CudaPlacement placement;  // CUDA backend: the device of each local worker (else empty),
                            // chosen by PlanJobMemory or else by SetUpJob
  ReadAhead read_ahead;     // the training input's first passes, read by PlanJobMemory
};

// The shard plans of the training and evaluation input (collective; first).
Status PlanJobInput(const TrainOptions& options, Comm* comm, JobParts* out);

// Rank 0 prints the memory plan (train/memory_plan.h); a usage error on every rank when a
// rank's DRAM plan exceeds what its node has. Keeps the passes its key sample read in
// parts->read_ahead. After PlanJobInput, before SetUpJob.
Status PlanJobMemory(const TrainOptions& options, Comm* comm, JobParts* parts);

// The CUDA backend with --collectives nccl or auto, in a job of several workers: the
// devices' NCCL communicator (HbmPs::ConnectDevices), for the training steps' sums. A
// collective, after SetUpJob; errors are agreed on.
Status ConnectStepCollectives(const TrainOptions& options, Comm* comm, JobParts* parts);

// The output directories, the backend and the stores, after PlanJobInput.
Status SetUpJob(const TrainOptions& options, Comm* comm, JobParts* out);

}  // namespace strata
