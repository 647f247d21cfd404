// PassData: one pass as it moves down the pipeline. The Read stage fills the batches and
// the pass's distinct keys; the Pull stage moves the keys into the routing (grouped by
// owner) and fills their rows (left in the owners' replies) and held flags; the Stage-in stage puts the rows into the HBM-PS standby tables and
// frees them; the Train stage consumes it. An evaluation pass keeps its keys and rows (a
// read-only pull has no routing). A pass with error set carries a stage's failure (agreed
// across ranks) to the Train stage; one with last set ends the stream.
#pragma once

#include <cstdint>
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
  std::vector<uint64_t> keys;                   // distinct keys of the local batches, until pulled
  std::vector<uint32_t> key_examples;           // with admission: local examples holding each key
  PassRouting routing;                          // training: the pulled keys and their routing
  PulledRows rows;                              // as pulled (in keys' or routing's order); freed once staged
  std::vector<uint8_t> held;                    // per key: an earlier pass in flight held its row
  double read_s = 0, pull_s = 0, stage_s = 0;
  Status error;
  bool last = false;
};

}  // namespace strata
