// The rank's row store stack, built from the flags: with --mem-cache-gb 0 every row lives in
// a DRAM hash map; otherwise the MEM-PS cache (that budget) sits over the SSD-PS in
// <--ssd-dir>/rank-<r>. Each run starts its SSD-PS empty: the tier is a cache of the
// training state, whose durable form is the checkpoint. So the SSD-PS runs in cache mode
// (strata/ssd/ssd_store.h: no manifest, no fsync, segments compacted while training) rather
// than paying an fsync'ed manifest at every pass just to make its segments compactable; the
// trainer reads its stats through SsdStore::WaitForDiskBound at each pass end, which holds
// disk use to 2x the live rows plus one segment. The MEM-PS evicts only when asked
// (MemPs::Evict): the trainer asks before each pass's pull and after each batch of resumed
// rows.
#pragma once

#include <memory>

#include "strata/mem/mem_ps.h"
#include "strata/ssd/ssd_store.h"
#include "strata/store/row_store.h"
#include "strata/train/options.h"

namespace strata {

struct RowStores {
  std::unique_ptr<RowStore> store;  // what the trainer reads and writes
  MemPs* mem = nullptr;             // the MEM-PS inside store, or null without an SSD tier
  SsdStore* ssd = nullptr;          // the SSD-PS under mem, or null without an SSD tier
};

// threads: the rank's, which the DRAM hash map's large calls may use.
Status OpenRowStores(const TrainOptions& options, int rank, size_t row_bytes, int threads, RowStores* out);

}  // namespace strata
