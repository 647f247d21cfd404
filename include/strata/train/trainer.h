// Trainer: the SPMD training job of one rank. Plans the input shards (rank 0 scans and
// broadcasts), then runs passes: Read (each local worker cuts its chunk into batches),
// Pull (the pass's keys from their owners), Stage-in (rows into the HBM-PS), Train
// (bulk-synchronous global steps) and Push (rows back to their owners). Evaluates with
// exact global AUC and logloss, prints one progress line per pass on rank 0 and writes
// the JSONL metrics. Every error is agreed across ranks before it is returned, so all
// ranks return the same Status and none is left in a collective.
#pragma once

#include <memory>

#include "strata/comm/comm.h"
#include "strata/common/status.h"
#include "strata/train/options.h"

namespace strata {

// Runs the whole job described by options on this rank.
Status RunTraining(const TrainOptions& options, Comm* comm);

}  // namespace strata
