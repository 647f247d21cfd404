// MemoryPlan: what one rank will hold in HBM, DRAM and on disk, worked out before the first
// step from the flags and a sample of the input, so that a run that cannot fit is refused
// at once, naming the flag to change, instead of dying mid-run (FBGEMM's and TorchRec's
// planners do the same for their tables; HugeCTR users ask for it).
//
// Keys are the one thing the flags cannot say. SampleKeys reads this rank's first two
// passes with the reader training uses (which then trains on them without reading them
// again): a pass's distinct keys and the bytes of its batches, and the keys of the second
// pass not in the first. The model is taken to gain that many new keys
// every further pass of an epoch: linear growth, an upper estimate on real logs, where new
// keys thin out as a run goes on.
//
// Every item is an estimate from sizes the stores document (their per-row overheads, the
// SSD-PS index's bytes a key, the disk bound of 2x live plus a segment); the
// larger-than-memory bench prints the DRAM total beside the measured peak RSS.
//
// Thread safety: plain functions and values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/common/status.h"
#include "strata/data/shard_plan.h"
#include "strata/train/options.h"
#include "train/pass_reader.h"

namespace strata {

// This rank's keys, from its first two passes.
struct KeySample {
  uint64_t pass_keys = 0;      // distinct keys of the first pass
  uint64_t new_keys = 0;       // keys of the second pass not in the first
  uint64_t epoch_passes = 1;   // passes in an epoch of the job
  double pass_batch_bytes = 0; // what the first pass's batches hold (keys, offsets, labels, dense)
  double read_ahead_bytes = 0; // what the two passes hold (batches and keys) until training takes them
  uint64_t model_keys() const { return pass_keys + new_keys * (epoch_passes - 1); }
};

// The dense model, its optimizer state and a batch's activations of `workers` workers.
double DenseModelBytes(const TrainOptions& o, int workers);

// A collective on comm: every rank reads its own shard. The passes read and their reader
// go to *ahead. REQUIRES: o and plan outlive *ahead.
Status SampleKeys(const TrainOptions& o, const ShardPlan& plan, Comm* comm, KeySample* out, ReadAhead* ahead);

struct MemoryPlan {
  struct Item {
    std::string what;
    double bytes = 0;
    std::string flag;  // the flag that sizes it, or empty
  };
  std::vector<Item> hbm, dram, disk;
  double Total(const std::vector<Item>& items) const;
};

// base_rss: what the process holds already (libraries, MPI, the input plan). gpu: the
// backend puts the pass tables in HBM (else the HBM-PS tables are in DRAM); the HBM items
// are one GPU's.
MemoryPlan PlanMemory(const TrainOptions& o, const KeySample& keys, int64_t base_rss, bool gpu);

// The plan as rank 0 prints it; a have of 0 is unknown.
std::string FormatPlan(const MemoryPlan& plan, const KeySample& keys, double dram_have, double hbm_have);

// Usage error (exit 2) when the HBM plan exceeds hbm_have (a GPU's free memory) or the DRAM
// plan exceeds dram_have, naming the flag of that plan's largest item that a flag sizes.
// A have of 0 is unknown and never refuses.
Status CheckPlanFits(const MemoryPlan& plan, double dram_have, double hbm_have);


}  // namespace strata
