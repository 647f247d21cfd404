// MEM-PS: the DRAM cache of rows over a backing RowStore (the SSD-PS in production), itself a
// RowStore, plus the pass-aware calls the trainer's pipeline makes. It owns the backing store.
//
// Promises:
//   - Lossless: whatever the capacity, Get returns the newest row Put for a key (cached or in
//     the backing store), and a row is never dropped before its newest value is written.
//   - Policy (strata/mem/cache_policy.h): the working sets pinned for passes in flight are
//     never evicted; other rows go least frequent first. Dirty victims are written to the
//     backing store in batched Puts of up to flush_batch_rows; clean victims are dropped with
//     no write. Pinned rows may hold the cache above its budget (never lost, just counted).
//   - Keys never written to the backing store are answered not-found without asking it: a
//     Bloom filter of every key written holds them off (only when the backing store was empty
//     at open; over a non-empty one every miss asks it, which answers from its index).
//   - A pinned key that a Get finds in neither tier gets a placeholder: an entry and a slot
//     with no row, counted in the budget, which its pass's Put fills without looking the
//     key up again; Gets answer not-found from it, and eviction drops it unwritten.
//   - Frequency: the row's own u32 counter at freq_offset when given (RowLayout's freq), else
//     the passes that touched the row while cached. cache_sim shows the counter is the one to
//     use (at 5% of Criteo's keys it keeps 1.5x the hits).
//   - Erase drops cached rows and erases in the backing store the keys it holds (every key not
//     cached, and the cached ones flagged as written there).
//   - Destroying a MEM-PS drops its dirty rows: Flush first to keep them.
//
// Thread safety: Get and Pin may run concurrently with Get and Pin (64 lock stripes by key
// hash, each with its own policy, so calls on different stripes never share a lock); so may
// one PutIfRoom (a Get racing it for a key returns the row before the put or after it,
// never a mix; rows a concurrent Get loads may take the cache a little past its budget),
// and, with evict_in_calls off, one UnpinPass or BeginPass (then they evict nothing) and
// one EvictThenGet or Evict, when the backing store allows Gets beside Puts and the Gets
// and PutIfRooms beside the eviction are for pinned keys (so it takes none of their rows).
// Every other call needs external serialization against all calls. Get never writes to
// the backing store: rows it loads may leave the cache over budget until the next Put,
// BeginPass, UnpinPass or Evict (only Evict with evict_in_calls off).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "strata/common/status.h"
#include "strata/store/row_store.h"

namespace strata {

struct MemPsOptions {
  uint64_t capacity_bytes = uint64_t{1} << 30;  // --mem-cache-gb; rows plus their index
  // Rows per backing Put: large sequential SSD-PS writes, with keys enough for its index
  // to merge them block by block (2.6x cheaper a key than 4096 at 20M keys).
  size_t flush_batch_rows = 65536;
  int stripes = 64;                // lock stripes; the capacity is split evenly among them
  int freq_offset = -1;            // byte offset of the row's u32 frequency; -1: count passes
  int bloom_bits_per_key = 10;     // about 1% false positives
  int threads = 1;                 // a large call's stripes are spread over that many threads
  // Put, BeginPass and UnpinPass evict down to the budget before they return. Off: Evict
  // does, for a caller that evicts (and writes dirty victims) off its critical path; it
  // evicts below the budget by the rows inserted since the previous Evict, and an eighth
  // more, so that the rows inserted until the next one (a pass's new keys, which PutIfRoom
  // can then put beside the next pull's gets) refill the cache to its budget, not past it.
  // A Put that takes a stripe over the budget all the same evicts that stripe.
  bool evict_in_calls = true;

  // Rows an eviction's write batch is reserved for: a full batch, and the victims of the
  // stripe that fills it, which go in with it.
  size_t eviction_batch_rows() const { return flush_batch_rows + flush_batch_rows / 8; }
};

// DRAM bytes a cached row costs beyond its row_bytes: its 20-byte policy entry (key, freq,
// touch stamp, pin bits), its handle and tag in the key index (about 9 bytes at the index's
// average load) and its flags byte. Capacity counts rows at row_bytes + this;
// MemPsStats::resident_bytes reports what is actually allocated.
constexpr size_t kMemPsRowOverheadBytes = 30;

struct MemPsStats {
  uint64_t hits = 0;              // Get keys answered from the cache
  uint64_t misses = 0;            // Get keys not cached (then read or known absent)
  uint64_t bloom_skips = 0;       // misses answered not-found without asking the backing store
  uint64_t backing_lookups = 0;   // keys asked of the backing store (Get misses, Put probes)
  uint64_t backing_rows_read = 0; // of those, found there
  uint64_t evictions = 0;         // rows dropped from the cache
  uint64_t dirty_evictions = 0;   // of those, written first
  uint64_t rows_flushed = 0;      // rows written to the backing store (evictions and Flush)
  uint64_t bytes_flushed = 0;
  uint64_t flush_batches = 0;     // backing Puts issued
  uint64_t resident_rows = 0;
  uint64_t resident_bytes = 0;    // DRAM allocated for rows and their index (arena, policy, flags)
  uint64_t pinned_rows = 0;
  uint64_t dirty_rows = 0;
  uint64_t capacity_rows = 0;
  uint64_t bloom_bytes = 0;
  double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 0; }
};

class MemPs : public RowStore {
 public:
  // Starts pass `pass` (passes only grow; the frequency counting and the stats use it) and
  // evicts down to the budget.
  virtual Status BeginPass(int pass) = 0;

  // Declares keys: (n) part of the working set of `pass`: their rows, cached now or cached
  // later by Get or Put, are not evicted until UnpinPass(pass). Call it before the pass's
  // Get so that rows read for the pass stay; calling it earlier (the trainer announces each
  // pass when it is read, a pass before its pull) spares those rows from the evictions in
  // between as well. REQUIRES: pass > every pass unpinned so far.
  virtual void Pin(const uint64_t* keys, size_t n, int pass) = 0;

  // Releases the pins of `pass` and evicts down to the budget. Passes are unpinned in
  // increasing order.
  virtual Status UnpinPass(int pass) = 0;

  // Evicts down to the budget: unpinned rows in policy order, dirty ones written first.
  virtual Status Evict() = 0;

  // Evict, then Get(keys): the same results, but the Get's reads from the backing store
  // run beside the eviction's writes (on a thread of its own) when the store allows it
  // (RowStore::GetsBesidePuts), and rows read and placeholders go in after the eviction.
  // REQUIRES: every key is pinned (so the eviction takes none of them).
  virtual Status EvictThenGet(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) = 0;

  // With evict_in_calls off: overwrites the rows of the keys the cache holds (or holds a
  // placeholder for: a pinned key a Get found in neither tier), and puts the others too
  // when no stripe would pass its budget for them (*put true); else *put is false and only
  // those overwrites were made, so the caller Puts all the keys again (a row put twice is
  // the row put once). It evicts nothing and writes nothing to the backing store, so it
  // may run beside Get and Pin (see above).
  virtual Status PutIfRoom(const uint64_t* keys, size_t n, const uint8_t* rows, bool* put) = 0;

  // Writes every dirty row to the backing store (rows stay cached, now clean), then Syncs
  // it. RowStore::Sync does the same.
  virtual Status Flush() = 0;

  virtual MemPsStats mem_stats() const = 0;

  // num_keys() counts the keys of the cache and the backing store together, each once,
  // walking the cache (O(cached rows)). RowStore::stats() reports the store as a whole for
  // live_keys (= num_keys()), logical_bytes (live_keys x row_bytes) and dram_bytes (the
  // backing store's plus resident_bytes and the Bloom filter); every other field
  // (disk_bytes, live_bytes, index_bytes of the backing store's key index, I/O and
  // compaction counters) is the backing store's, passed through.
};

// Builds a MEM-PS over `backing` (which it owns). Errors: stripes < 1, flush_batch_rows < 1,
// bloom_bits_per_key < 1, or a freq_offset that leaves no room for a u32 in the row.
Status NewMemPs(const MemPsOptions& options, std::unique_ptr<RowStore> backing,
                std::unique_ptr<MemPs>* out);

}  // namespace strata
