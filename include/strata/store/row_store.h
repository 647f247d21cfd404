// RowStore: the per-rank store of the rows this rank owns (owner = OwnerRank(key)).
// Implementations: the in-memory store (this header's factory), the SSD-PS
// (strata/ssd/ssd_store.h) and the MEM-PS cache over it (strata/mem/). Rows are opaque
// fixed-size byte records of row_bytes(); a store never interprets them.
//
// Thread safety: Get may be called concurrently with Get; Put, Sync and Scan require
// external serialization against every other call unless an implementation says more
// (GetsBesidePuts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "strata/common/status.h"

namespace strata {

// Counters a store exposes to the trainer's metrics. Fields a store does not track stay 0.
struct StoreStats {
  uint64_t live_keys = 0;
  uint64_t logical_bytes = 0;       // live_keys * row_bytes
  uint64_t disk_bytes = 0;          // bytes of files on disk
  uint64_t live_bytes = 0;          // disk bytes the newest record of every live key takes
                                    // when packed: live_keys x a record's share of a unit
                                    // (padding included); the SSD-PS bounds disk_bytes by it
  uint64_t bytes_read = 0;          // from disk
  uint64_t bytes_written = 0;       // to disk, including compaction
  uint64_t user_bytes_written = 0;  // rows handed to Put
  uint64_t compactions = 0;
  uint64_t compaction_bytes = 0;
  uint64_t index_bytes = 0;         // DRAM used by the key index
  uint64_t dram_bytes = 0;          // DRAM the store allocates: its index and any rows it holds
  double space_amplification() const { return logical_bytes ? double(disk_bytes) / logical_bytes : 0; }
  double write_amplification() const { return user_bytes_written ? double(bytes_written) / user_bytes_written : 0; }
  double index_bytes_per_key() const { return live_keys ? double(index_bytes) / live_keys : 0; }
};

class RowStore {
 public:
  virtual ~RowStore() = default;

  virtual size_t row_bytes() const = 0;

  // Batched lookup. keys: (n) ; rows: (n, row_bytes) out ; found: (n) out, 1 if present.
  // Rows of keys not found are left untouched.
  virtual Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) = 0;

  // Batched upsert. keys: (n), distinct ; rows: (n, row_bytes).
  virtual Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) = 0;

  // Put from a caller that knows exactly which keys the store holds: in_store: (n), 1 when
  // the store holds some version of keys[i], 0 when it holds none. The SSD-PS then skips
  // the read a plain Put needs for a key its fingerprinted index cannot tell apart
  // (strata/ssd/ssd_store.h); a wrong value there can lose a row. Other stores ignore it.
  virtual Status PutKnown(const uint64_t* keys, size_t n, const uint8_t* rows, const uint8_t* in_store) {
    (void)in_store;
    return Put(keys, n, rows);
  }

  // Removes keys (n, distinct): their rows are gone for Get, Scan and num_keys. REQUIRES:
  // every key is present (the SSD-PS's fingerprinted index cannot tell an absent key from
  // one that shares its fingerprint). A durable SSD-PS refuses it (it has no tombstones).
  virtual Status Erase(const uint64_t* keys, size_t n) = 0;

  // Whether Get may run beside one Put or PutKnown on another thread (the SSD-PS: yes).
  virtual bool GetsBesidePuts() const { return false; }

  // Makes every Put before it durable (no-op for the in-memory store).
  virtual Status Sync() = 0;

  // Visits every live row once, in no particular order.
  virtual Status Scan(const std::function<void(uint64_t key, const uint8_t* row)>& visit) = 0;

  virtual uint64_t num_keys() const = 0;
  virtual StoreStats stats() const = 0;
};

// A sharded hash map in DRAM; concurrent Gets do not serialize on one lock. With threads > 1
// a large Get or Put spreads its keys' shards over that many threads of the store's own.
std::unique_ptr<RowStore> NewMemoryRowStore(size_t row_bytes, int threads = 1);

}  // namespace strata
