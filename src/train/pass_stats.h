// PassStats: timings and counters of one pass, and the progress line / JSONL record made
// from them on rank 0.
#pragma once

#include <cstdint>
#include <string>

#include "strata/metrics/jsonl.h"

namespace strata {

struct PassStats {
  int pass = 0;
  int epoch = 0;
  int64_t examples = 0;       // job-wide, this pass
  int64_t steps = 0;
  int64_t keys = 0;           // job-wide distinct keys pulled (sum over ranks)
  double loss_sum = 0;        // job-wide
  double read_s = 0, pull_s = 0, stage_s = 0, train_s = 0, push_s = 0, wall_s = 0;
  uint64_t mpi_bytes = 0;     // this rank, this pass
  bool evaluated = false;
  double eval_auc = 0, eval_logloss = 0;

  double examples_per_s() const { return wall_s > 0 ? examples / wall_s : 0; }
  double train_logloss() const { return examples ? loss_sum / examples : 0; }
  std::string ProgressLine() const;
  JsonRecord ToJson() const;
};

}  // namespace strata
