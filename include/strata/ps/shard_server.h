// ShardServer: the owner side of the sharded parameter server on one rank, in the style of
// ps-lite's KVServer request handle. It owns the rank's row store stack (the DRAM map, or
// the MEM-PS over the SSD-PS), the lock that orders pulls against write-backs, the set of
// passes in flight, the MEM-PS pins, the creation of rows never seen before, and the
// write-back buffer. The exchange (strata/comm/param_exchange.h) calls it with the keys
// other ranks ask for.
//
// Pass consistency: a pass is in flight from the end of its pull until its rows are home
// (its Release applied). A pull for pass p flags every row that an earlier pass in flight
// holds, so the requester takes that pass's final row instead of the stale stored one.
//
// Write-back where the slack is. With every row in DRAM, Store and Release only buffer what
// they are given (the one extra copy of a pass's returned rows this rank keeps: a buffer of
// the rank's pool, which the push-back exports its own rows straight into, and into which a
// part from another rank is copied), and the buffer is applied (its buffers given back to
// the pool) by the next call that reads or changes the store:
// the next pull, which the Pull stage makes while the next pass trains, so the store's
// inserts never hold up the training thread; or a read-only pull, Load, WithStore or
// NumKeys. The released passes leave the in-flight set when it is applied. With a MEM-PS,
// Store puts at once, beside any pull in progress when the cache has room (MemPs::PutIfRoom;
// the MEM-PS evicts before each pull, on the Pull stage's thread, leaving room for a pass's
// new rows), else with the lock held alone: a buffered pass would sit outside the cache's
// DRAM budget, and waiting for the pull's SSD-PS reads would hold up the training thread.
// Release then applies at once too, beside any pull (unless eviction must erase rows);
// without a MEM-PS it is buffered.
//
// Promises:
//   - A row never stored is created from (key, seed) by InitRow, the same on every rank.
//   - Rows come back exactly as last stored (tiers move bytes, never change them).
//   - A pull sees either a row before its pass's write-back with the flag, or after it.
//   - Every call that reads the store sees every Store made before it started.
//
// Admission (--admit-min-count, strata/ps/admission.h): the server owns the rank's ledger.
// A pull reports which keys have no row (fresh), and the exchange asks Admit once a pass
// for each, with the job-wide count of the pass's examples that hold it. A pending key's
// row is zero and never stored, and no later pull takes it as held; a read-only pull
// reads a key without a row as zero (with admission off, as its initial row).
//
// Eviction (--evict-unseen-passes N): a stored row whose last pass L has L + N <= p is
// dead after pass p. Releasing pass p (once its rows are stored) erases the rows that died
// at p from every tier, counted per pass; a pull of pass q takes a row with L + N <= q - 1
// for absent, so a pass pulled ahead of the erase sees what it would after it.
//
// Thread safety: every call is safe from any thread. Pulls, read-only pulls, announcements
// and a MEM-PS's Stores and Releases share the lock and run beside each other (the Pull
// stage's and the training thread's; Stores and Releases also take a lock of their own, so
// one runs at a time); applying the write-back buffer, Load, WithStore and the pins and
// eviction before a pull hold it alone, except that over an SSD-PS those share it, the
// eviction running beside the pull's reads (see Pull). A buffering Store or Release takes only the buffer's own lock.
// A pull flags the rows of the passes in flight when its reads start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "strata/common/buffer_pool.h"
#include "strata/common/key_index.h"
#include "strata/common/spare_threads.h"
#include "strata/common/status.h"
#include "strata/mem/mem_ps.h"
#include "strata/model/model_spec.h"
#include "strata/ps/admission.h"
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
    kAdmissionBytes,  // DRAM the admission ledger takes, as allocated
    kFields
  };
  static bool IsLevel(int f) { return f >= kSsdDiskBytes && f != kCompactions; }
  int64_t& operator[](int f) { return v[f]; }
  int64_t operator[](int f) const { return v[f]; }
  int64_t v[kFields] = {};
};

class ShardServer {
 public:
  // store: the rank's stack; mem: the MEM-PS inside it (built with evict_in_calls off, so
  // that Store's PutIfRoom finds the room the pulls' evictions leave), or null when every
  // row is in DRAM; ssd: the SSD-PS under mem, or null. threads: the rank's, which a
  // pull's per-key work (new rows, the in-flight check) spreads over.
  ShardServer(const ModelSpec& model, std::unique_ptr<RowStore> store, MemPs* mem, SsdStore* ssd = nullptr,
              int threads = 1);

  size_t row_bytes() const { return row_bytes_; }
  int dim() const { return model_.row_dim(); }
  // Whether announcing a pass's keys ahead of its pull helps (a MEM-PS can pin them).
  bool caches() const { return mem_ != nullptr; }

  // keys (n) will be pulled for `pass`: the MEM-PS pins them now, so evictions before the
  // pull spare them. A pass announced before its pull is not pinned again by Pull.
  Status Announce(int pass, const uint64_t* keys, size_t n);

  // The pull of `pass`: rows (n, row_bytes) out, created when absent; held (n) out, 1 for
  // a row that an earlier pass in flight holds; fresh (n) out, when not null: 1 for a key
  // with no row stored or held (its row is created by InitRow). Before serving, the MEM-PS
  // pins the keys (unless announced) and evicts down to its budget.
  Status Pull(int pass, const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* held, uint8_t* fresh = nullptr);

  // Admission is on (--admit-min-count > 0).
  bool admits() const { return admission_ != nullptr; }
  // Fresh keys (n) of `pass`, each asked once a pass, and the job-wide count of the pass's
  // examples holding each: admitted (n) out (Admission::Admit). REQUIRES: admits().
  void Admit(int pass, const uint64_t* keys, const uint32_t* examples, size_t n, uint8_t* admitted);
  // The admission totals after pass `through` (zero without admission).
  AdmissionTotals AdmissionThrough(int through) const;
  // The pending keys, counts and last passes counted after pass `through` (none without
  // admission).
  void PendingThrough(int through, std::vector<uint64_t>* keys, std::vector<uint8_t>* counts,
                      std::vector<uint32_t>* last) const;
  // Rows erased by eviction at the end of pass p (after applying the write-back buffer,
  // which releases it), or 0 when the pass is not released yet or eviction is off.
  Status EvictedAt(int pass, int64_t* rows);

  // Keeps (on) the keys eviction erases, by pass, for the increments and deltas that must
  // record them; off by default.
  void LogErased(bool on);
  // Keeps (on) the keys stored by push-backs since the last WithChanged, less those erased
  // since, so an increment reads those rows alone instead of scanning the store; off by
  // default.
  void LogChanged(bool on);
  // Runs fn with the store (the lock held alone, the write-back buffer applied) and the
  // keys stored since the previous call and not erased since (sorted, distinct: each one
  // the store holds), then forgets them.
  Status WithChanged(const std::function<Status(RowStore&, const std::vector<uint64_t>&)>& fn);
  // The keys eviction erased at passes >= first (the write-back buffer applied first).
  Status ErasedSince(int first, std::vector<uint64_t>* keys);
  // Drops the logged keys of passes before first.
  void ForgetErasedBefore(int first);
  // Erases those of keys (n) the store holds (an increment's deletions, on resume).
  Status EraseStored(const uint64_t* keys, size_t n);

  // Resume: pending keys, their counts and last passes. REQUIRES: admits().
  void LoadPending(const uint64_t* keys, const uint8_t* counts, const uint32_t* last, size_t n);

  // A read-only pull (evaluation, refresh): rows (n, row_bytes) out; pins and flags nothing.
  Status PullReadOnly(const uint64_t* keys, size_t n, uint8_t* rows);

  // After the pull of `pass`: owned holds the keys of this rank that the pass now holds;
  // pending (by owned id; empty without admission) flags the keys admission left without
  // a row, which the pass does not hold.
  void Hold(int pass, std::shared_ptr<const KeyIndex> owned, std::vector<uint8_t> pending = {});

  // Pass-end write-back of returned rows: keys (n), rows (n, row_bytes); buffered without
  // a MEM-PS, put at once with one (see above).
  Status Store(const uint64_t* keys, size_t n, const uint8_t* rows);
  // The same for rows the caller hands over (keys.size() rows, a buffer from
  // TakeBuffer): buffered as they are, with no copy, and given back to the pool once put.
  Status Store(std::vector<uint64_t> keys, std::string rows);

  // The rank's pool of pass-sized buffers (a pull's replies, the rows a pass returns): a
  // buffer for `bytes` (BufferPool::Take), and one given back once spent.
  std::string TakeBuffer(size_t bytes) { return buffers_.Take(bytes); }
  void KeepBuffer(std::string buffer) { buffers_.Give(std::move(buffer)); }
  size_t buffers_kept() const { return buffers_.kept(); }
  // Applies the write-back buffer now, if any (the lock held alone), so that its buffers
  // are back in the pool: a pull calls it before it takes its reply's buffer.
  Status FlushWriteBack();

  // Every row of `pass` was stored: the pass leaves the in-flight set (once the buffer is
  // applied, when buffered), and the MEM-PS unpins it and moves on to the next pass.
  Status Release(int pass);

  // Resume: stores rows (n, row_bytes) and evicts down to the cache budget.
  Status Load(const uint64_t* keys, size_t n, const uint8_t* rows);

  // Runs fn on the store with the lock held alone (checkpoints, exports).
  Status WithStore(const std::function<Status(RowStore&)>& fn);

  // The counters now (a buffered write-back is not applied first). The SSD-PS's are read
  // once its disk use is within its bound (2x the live rows plus one segment;
  // SsdStore::WaitForDiskBound), so every pass's record is.
  Status Counters(TierCounters* out);
  // Keys stored (the buffer applied first).
  Status NumKeys(uint64_t* out);

 private:
  // One Store's rows (each Store's keys are distinct; two passes' Stores may share keys),
  // or a Release (pass >= 0), in the order they were made.
  struct WriteBack {
    std::vector<uint64_t> keys;
    std::string rows;  // keys.size() rows
    int released = -1;
  };

  // Applies the write-back buffer in order: rows go into the store, released passes leave
  // the in-flight set and the MEM-PS unpins them. REQUIRES: mu_ held alone.
  Status ApplyWriteBack();
  bool WriteBackPending();
  // The pass leaves the in-flight set; the MEM-PS unpins it. REQUIRES: mu_ held alone, or
  // shared with store_mu_ held when nothing is erased (evict_unseen_passes 0) and the
  // MEM-PS evicts only in Evict.
  Status ReleaseNow(int pass);
  // Puts a push-back's rows, noting their keys when LogChanged. REQUIRES: mu_ held alone.
  Status PutReturned(const uint64_t* keys, size_t n, const uint8_t* rows);
  // Notes keys (n) as stored when LogChanged. REQUIRES: mu_ held alone, or shared with
  // store_mu_ held (a MEM-PS's Store).
  void LogChangedKeys(const uint64_t* keys, size_t n);
  // Drops the erased keys from the log of changed keys. REQUIRES: mu_ held alone.
  void ForgetChangedKeys(std::vector<uint64_t> erased);
  // The part of a pull that holds mu_ alone (see Pull).
  Status BeforeReadsAlone(int pass, const uint64_t* keys, size_t n, bool evict);
  // Pins keys (n) for `pass` in the MEM-PS unless the pass was announced. REQUIRES: mu_
  // held (shared or alone), mem_.
  void PinUnlessAnnounced(int pass, const uint64_t* keys, size_t n);
  // Applies the buffer and runs fn, with mu_ held alone.
  Status Exclusive(const std::function<Status()>& fn);
  // Rows of keys not stored, or dead by pass `now` (eviction), are created (InitRow), or
  // zero when created is false; fresh (n) out, when not null: 1 for those. evict_first:
  // the MEM-PS evicts beside the reads (MemPs::EvictThenGet; every key pinned).
  // REQUIRES: mu_ held (shared or alone).
  Status ReadRows(const uint64_t* keys, size_t n, uint8_t* rows, bool created, uint8_t* fresh, int now,
                  bool evict_first = false);
  bool Dead(const uint8_t* row, int now) const;
  // Erases the rows that died at the end of `pass`. REQUIRES: mu_ held alone.
  Status EvictDead(int pass);
  struct Held {
    std::shared_ptr<const KeyIndex> owned;
    std::vector<uint8_t> pending;  // by owned id, or empty
  };
  // The passes before `pass` in flight now.
  std::vector<std::shared_ptr<const Held>> InFlightBefore(int pass);
  // Whether one of passes holds key.
  static bool HeldBy(const std::vector<std::shared_ptr<const Held>>& passes, uint64_t key);

  const ModelSpec model_;
  const RowLayout layout_;  // of the stored rows
  const size_t row_bytes_;
  std::unique_ptr<RowStore> store_;
  MemPs* const mem_;
  SsdStore* const ssd_;
  // Shared: pulls, read-only pulls, announcements, a MEM-PS's Stores and Releases. Alone:
  // the other writes.
  std::shared_mutex mu_;
  std::mutex in_flight_mu_;  // pulls and releases may run beside each other
  std::map<int, std::shared_ptr<const Held>> in_flight_;  // protected by in_flight_mu_
  const std::unique_ptr<Admission> admission_;  // null without admission
  SpareThreads threads_;
  // Two buffers go round without a MEM-PS (a pull's reply, the write-back); with one, only
  // the reply does.
  BufferPool buffers_;
  std::atomic<int> released_through_{-1};  // the last pass released
  std::map<int, int64_t> evicted_;     // protected by mu_: rows erased at each released pass
  bool log_erased_ = false;            // protected by mu_
  bool log_changed_ = false;           // protected by mu_
  // Written under mu_ alone, or under mu_ shared with store_mu_ (a MEM-PS's Store).
  std::mutex store_mu_;  // a MEM-PS's Stores and Releases, one at a time
  std::vector<uint64_t> changed_;      // keys stored since WithChanged, less those erased (LogChanged)
  size_t changed_distinct_ = 0;        // changed_'s size after its last dedup
  std::map<int, std::vector<uint64_t>> erased_;  // protected by mu_: keys erased, by pass (LogErased)
  std::mutex announce_mu_;  // announcements hold mu_ shared, so theirs is a lock of its own
  std::set<int> announced_;  // protected by announce_mu_: passes announced, not yet released
  std::mutex write_back_mu_;  // Store and Release hold only this; taken after mu_, never before
  std::vector<WriteBack> write_back_;  // protected by write_back_mu_
};

}  // namespace strata
