// ShardServer: the owner side of the sharded parameter server on one rank, in the style of
// ps-lite's KVServer request handle. It owns the rank's row store stack (the DRAM map, or
// the MEM-PS over the SSD-PS), the lock that orders pulls against write-backs, the set of
// passes in flight, the MEM-PS pins, and the creation of rows never seen before. The
// exchange (strata/comm/param_exchange.h) calls it with the keys other ranks ask for.
//
// Pass consistency: a pass is in flight from the end of its pull until its rows are home
// (Release). A pull for pass p flags every row that an earlier pass in flight holds, so
// the requester takes that pass's final row instead of the stale stored one.
//
// Promises:
//   - A row never stored is created from (key, seed) by InitRow, the same on every rank.
//   - Rows come back exactly as last stored (tiers move bytes, never change them).
//   - A pull sees either a row before its pass's write-back with the flag, or after it.
//
// Thread safety: every call is safe from any thread. Pulls, read-only pulls and
// announcements share the lock and run beside each other (the Pull stage's and the
// training thread's); Store, Release, Load, Evict-before-pull and WithStore hold it alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "strata/common/key_index.h"
#include "strata/common/status.h"
#include "strata/mem/mem_ps.h"
#include "strata/model/model_spec.h"
#include "strata/ssd/ssd_store.h"
#include "strata/store/row_store.h"

namespace strata {

// Tier counters of one rank's stores (zero without an SSD tier): cumulative counts, except
// the levels (IsLevel), which say how things stand now. An array, so ranks sum it at once.
struct TierCounters {
  enum Field {
    kCacheHits, kCacheMisses, kSsdRowsRead, kSsdRowsWritten, kSsdBytesRead, kSsdBytesWritten,
    kSsdDiskBytes, kCompactions, kSsdLiveBytes, kSsdIndexBytes,
    kDramRows,   // rows held in DRAM: the MEM-PS's resident rows, or every row without one
    kDramBytes,  // DRAM those rows and their index take, as allocated
    kFields
  };
  static bool IsLevel(int f) { return f >= kSsdDiskBytes && f != kCompactions; }
  int64_t& operator[](int f) { return v[f]; }
  int64_t operator[](int f) const { return v[f]; }
  int64_t v[kFields] = {};
};

class ShardServer {
 public:
  // store: the rank's stack; mem: the MEM-PS inside it, or null when every row is in DRAM;
  // ssd: the SSD-PS under mem, or null.
  ShardServer(const ModelSpec& model, std::unique_ptr<RowStore> store, MemPs* mem, SsdStore* ssd = nullptr);

  size_t row_bytes() const { return row_bytes_; }
  int dim() const { return model_.embedding_dim; }
  // Whether announcing a pass's keys ahead of its pull helps (a MEM-PS can pin them).
  bool caches() const { return mem_ != nullptr; }

  // keys (n) will be pulled for `pass`: the MEM-PS pins them now, so evictions before the
  // pull spare them. A pass announced before its pull is not pinned again by Pull.
  Status Announce(int pass, const uint64_t* keys, size_t n);

  // The pull of `pass`: rows (n, row_bytes) out, created when absent; held (n) out, 1 for
  // a row that an earlier pass in flight holds. Before serving, the MEM-PS pins the keys
  // (unless announced) and evicts down to its budget.
  Status Pull(int pass, const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* held);

  // A read-only pull (evaluation, refresh): rows (n, row_bytes) out; pins and flags nothing.
  Status PullReadOnly(const uint64_t* keys, size_t n, uint8_t* rows);

  // After the pull of `pass`: owned holds the keys of this rank that the pass now holds.
  void Hold(int pass, std::shared_ptr<const KeyIndex> owned);

  // Pass-end write-back of returned rows: keys (n), rows (n, row_bytes).
  Status Store(const uint64_t* keys, size_t n, const uint8_t* rows);

  // Every row of `pass` is home: it leaves the in-flight set, the MEM-PS unpins it and
  // moves on to the next pass.
  Status Release(int pass);

  // Resume: stores rows (n, row_bytes) and evicts down to the cache budget.
  Status Load(const uint64_t* keys, size_t n, const uint8_t* rows);

  // Runs fn on the store with the lock held alone (checkpoints, exports).
  Status WithStore(const std::function<Status(RowStore&)>& fn);

  // The counters now. The SSD-PS's are read once its disk use is within its bound (2x the
  // live rows plus one segment; SsdStore::WaitForDiskBound), so every pass's record is.
  Status Counters(TierCounters* out);
  uint64_t num_keys();

 private:
  // REQUIRES: mu_ held (shared or alone).
  Status ReadRows(const uint64_t* keys, size_t n, uint8_t* rows);
  bool HeldBefore(int pass, uint64_t key) const;

  const ModelSpec model_;
  const size_t row_bytes_;
  std::unique_ptr<RowStore> store_;
  MemPs* const mem_;
  SsdStore* const ssd_;
  // Shared: pulls, read-only pulls, announcements. Alone: writes and the in-flight set.
  std::shared_mutex mu_;
  std::map<int, std::shared_ptr<const KeyIndex>> in_flight_;  // protected by mu_
  std::mutex announce_mu_;  // announcements hold mu_ shared, so theirs is a lock of its own
  std::set<int> announced_;  // protected by announce_mu_: passes announced, not yet released
};

}  // namespace strata
