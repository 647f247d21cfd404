// PassData: one pass as it moves down the pipeline: the Read stage fills the batches, the
// Pull stage the working set's rows and routing, the Stage-in stage orders them by device
// shard; the Train stage consumes it. A pass with error set carries a stage's failure
// (agreed across ranks) to the Train stage; one with last set ends the stream.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/comm/param_exchange.h"
#include "strata/common/status.h"
#include "strata/data/batch.h"

namespace strata {

struct PassData {
  int pass = 0;
  int epoch = 0;
  int64_t steps = 0;                            // global steps, agreed across ranks
  std::vector<std::vector<Batch>> batches;      // per local worker
  std::vector<uint64_t> lines_after;            // per local worker: chunk lines read after this pass
  std::vector<uint64_t> keys;                   // distinct keys of the local batches
  std::vector<uint8_t> rows;                    // (keys, row bytes) as pulled; freed once in the HBM-PS
  std::vector<uint8_t> in_flight;               // per key: an earlier pass still held it when pulled
  std::shared_ptr<PassRouting> routing;
  double read_s = 0, pull_s = 0, stage_s = 0;
  Status error;
  bool last = false;
};

}  // namespace strata
