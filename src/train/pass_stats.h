// PassStats: timings and counters of one pass, and the progress line / JSONL record made
// from them on rank 0.
#pragma once

#include <cstdint>
#include <string>

#include "strata/metrics/jsonl.h"

namespace strata {

struct PassData;

struct PassStats {
  // Takes the pass's number, epoch, step count and its stages' times.
  void Begin(const PassData& pass);

  int pass = 0;
  int epoch = 0;
  int64_t examples = 0;       // job-wide, this pass
  int64_t steps = 0;
  int64_t keys = 0;           // job-wide distinct keys pulled (sum over ranks)
  double loss_sum = 0;        // job-wide
  double read_s = 0, pull_s = 0, stage_s = 0, train_s = 0, push_s = 0, wall_s = 0;
  uint64_t mpi_bytes = 0;     // this rank, this pass
  // Tiers, job-wide over the pass (zero without an SSD tier).
  int64_t cache_hits = 0, cache_misses = 0;
  int64_t ssd_rows_read = 0, ssd_rows_written = 0;
  int64_t ssd_bytes_read = 0, ssd_bytes_written = 0, ssd_disk_bytes = 0, compactions = 0;
  // Levels at the pass end, summed over ranks: what the live rows take on disk packed
  // (StoreStats::live_bytes; disk stays within 2x this plus a segment per rank), and the
  // DRAM of the SSD-PS key index.
  int64_t ssd_live_bytes = 0, ssd_index_bytes = 0;
  int64_t dram_rows = 0, dram_bytes = 0;  // rows in DRAM (cached, or all) and what they take
  // Admission (--admit-min-count), job-wide: rows this pass created, keys counted but not
  // admitted after it, and the DRAM of the ledgers.
  bool admits = false;
  int64_t rows_admitted = 0, keys_pending = 0, admission_bytes = 0;
  bool evicts = false;
  int64_t rows_evicted = 0;  // job-wide, erased at this pass's end (--evict-unseen-passes)
  int64_t peak_rss_bytes = 0;  // largest over ranks
  bool evaluated = false;
  double eval_auc = 0, eval_logloss = 0;

  double examples_per_s() const { return wall_s > 0 ? examples / wall_s : 0; }
  double train_logloss() const { return examples ? loss_sum / examples : 0; }
  double cache_hit_rate() const {
    return cache_hits + cache_misses ? double(cache_hits) / double(cache_hits + cache_misses) : 0;
  }
  // The slowest stage's share of the pass: 1 when the other stages hide fully behind it.
  double overlap_efficiency() const;
  std::string ProgressLine() const;
  JsonRecord ToJson() const;
};

}  // namespace strata
