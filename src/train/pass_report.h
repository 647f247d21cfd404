// PassReporter: per-pass and final metrics of the job. Completes a pass's stats with the
// job-wide tier counters of the pass (deltas of every rank's ShardServer counters, summed)
// and the largest peak RSS of any rank, then rank 0 prints the progress line and writes
// the JSONL record. Every call is a collective on the Comm given. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "strata/comm/comm.h"
#include "strata/metrics/jsonl.h"
#include "strata/ps/shard_server.h"
#include "train/pass_stats.h"

namespace strata {

// The job's totals for the final line and record.
struct JobTotals {
  int passes = 0;
  int64_t steps = 0, examples = 0, keys = 0;
  int64_t examples_here = 0;   // trained by this job (a resumed job excludes the earlier part)
  double loss_here = 0;        // their summed logloss
  double wall_s = 0;           // the whole job's, from start-up to the final evaluation
  double train_s = 0;          // its passes' (read, pull, steps, push-back): examples/s
  int ranks = 1, workers = 1;
  int64_t planned_dram_bytes = 0;  // this rank's memory plan (train/memory_plan.h)
  int64_t mpi_bytes_train = 0;     // this rank's MPI bytes sent in training, every communicator
  int64_t mpi_lower_bound = 0;     // this rank's share of their lower bound (ParamExchange),
                                   // for the step's sums over NCCL too
  int64_t nccl_bytes_train = 0;    // this rank's bytes sent over NCCL (HbmPs::device_bytes_sent)
};

class PassReporter {
 public:
  // REQUIRES: comm and server outlive the reporter.
  // evicts: --evict-unseen-passes is on (the records count the rows each pass erased).
  PassReporter(Comm* comm, ShardServer* server, bool evicts) : comm_(comm), server_(server), evicts_(evicts) {}

  // Rank 0 opens the JSONL file (empty path: none). Local: the caller agrees on it.
  Status Open(const std::string& metrics_path);

  // Fills st's tier counters and peak RSS; rank 0 prints and records it.
  Status Report(PassStats* st);

  // The final line and record; eval is printed when evaluated.
  Status Finish(const JobTotals& totals, const PassStats& eval);

 private:
  void FillTiers(const TierCounters& delta, PassStats* st) const;
  Status ReportAdmission(PassStats* st);

  Comm* comm_;
  ShardServer* server_;
  JsonlWriter metrics_;
  TierCounters before_;  // cumulative counters at the previous pass
  const bool evicts_;
  int64_t admitted_before_ = 0;  // this rank's rows admitted through the previous pass
};

}  // namespace strata
