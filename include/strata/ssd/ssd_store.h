// SSD-PS: the per-rank store of every row a rank owns, kept in a directory of append-only
// segment files (format drawn in strata/ssd/ssd_format.h). Updated rows are appended as new
// records in large sequential writes; a DRAM index maps key -> newest record in about 7.4
// bytes per key (fingerprints, not keys: src/ssd/compact_index.h); per-segment
// live counters drive a background compaction thread that rewrites segments whose stale
// fraction passes `compact_threshold`, or the most stale ones while disk use is over its
// bound (below) or `disk_budget_bytes`, and deletes the old files once they are unused.
//
// Two modes (SsdOptions::durable):
//   - durable (default): a store of record. The manifest names the live set; only synced
//     segments are compacted, and the old files go only after the manifest switch is durable.
//   - cache: rows whose durable copy lives elsewhere (the trainer's checkpoints). The store
//     starts empty (removing SSD-PS files left in the directory), never writes a manifest or
//     calls fsync, and compacts a segment as soon as it is sealed; Sync makes nothing durable.
//     Only a cache erases rows (Erase drops their index entries; compaction reclaims the
//     records): a store of record would need tombstones to keep them erased over a reopen.
//
// Disk bound: live_bytes (strata/store/row_store.h) is what the newest records of the live
// keys take packed; compaction starts before disk_bytes passes DiskBound() = 2 x live_bytes
// + segment_bytes (one open segment) and WaitForDiskBound() blocks until it is within. In
// cache mode that always succeeds once live_bytes reaches a segment header and a unit (8 KiB
// for rows under 4 KiB): a fully compacted store holds its live records packed plus the
// open segment. In durable mode segments not yet synced cannot be compacted.
//
// Promises:
//   - Get sees every Put before it, synced or not. A key never written is reported
//     not-found without disk I/O unless its fingerprint matches another key's (about
//     n / 2^40 of lookups), which costs one read.
//   - Put of a key already stored reads its old record once to tell it from a key with the
//     same fingerprint; PutKnown, told which keys are stored (the MEM-PS knows), reads
//     nothing. Both append only.
//   - Durable mode: after a crash at any instant (mid-append, mid-compaction,
//     mid-manifest), opening the directory recovers exactly the rows of the last completed
//     Sync(): newest synced values, nothing written after it, nothing resurrected from a
//     compacted-away segment.
//   - Every record read back is checksummed; damage is reported as Corruption naming the
//     file, never returned as a row.
//   - The first write or background error (disk full, I/O error, corruption found by the
//     compactor) is kept: later Put/Sync/CompactNow/WaitForDiskBound return it; Get and
//     Scan keep working.
//
// Thread safety: Get may run concurrently with Get and with one Put or PutKnown (the MEM-PS
// reads a pass's rows while it writes its evictions); Put, PutKnown, Sync, Erase and Scan
// need external serialization against each other, and Sync, Erase and Scan against Get. CompactNow, WaitForCompaction,
// WaitForDiskBound, stats, num_keys and num_segments may be called from any thread at any
// time; the compaction thread runs beside everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "strata/common/interval.h"
#include "strata/store/row_store.h"

namespace strata {

// compact_threshold's accepted values, (0, 1]: 1 compacts only segments with no live
// record. --ssd-compact-threshold takes the same range from here.
inline constexpr Interval kCompactThresholdRange{0, true, 1, false};

struct SsdOptions {
  std::string dir;                       // per-rank directory; created if absent
  size_t row_bytes = 0;                  // fixed row size; must match an existing dir
  uint64_t segment_bytes = 64ull << 20;  // big enough for sequential writes, small enough
                                         // that one compaction victim is cheap to rewrite
  double compact_threshold = 0.3;        // stale fraction that makes a segment a victim:
                                         // 0.3 holds disk near 1.3x live records (ssd_bench:
                                         // space amplification 1.65 of row bytes at write
                                         // amplification 2.4; 0.5 gave 2.14 at 1.6)
  uint64_t disk_budget_bytes = 0;        // compact the most stale segments while over; 0 = none
  bool direct_io = false;                // O_DIRECT reads and writes (bypass the page cache)
  int queue_depth = 64;                  // reads kept in flight by one Get
  size_t write_buffer_bytes = 4ull << 20;  // appends are issued in writes of this size, in
  size_t write_buffers = 8;                // the background while the next of these fills
  static constexpr size_t kCompactionWriteBuffers = 2;  // a compaction's own appends'
  // DRAM the write buffers take: the appends' ring and a compaction's.
  size_t write_buffer_total() const { return (write_buffers + kCompactionWriteBuffers) * write_buffer_bytes; }
  int threads = 1;                       // a large Put's index updates spread over these
                                         // (SpareThreads: idle ones only)
  bool background_compaction = true;     // false: only CompactNow() compacts (tests)
  bool durable = true;                   // false: cache mode (see above): no manifest, no
                                         // fsync, sealed segments compactable at once
};

// DRAM bytes a key the SSD-PS's index may take, at most, with `threads` (SsdOptions).
double SsdIndexPeakBytesPerKey(int threads);

class SsdStore : public RowStore {
 public:
  // Runs one compaction round now on the calling thread's behalf: rewrites every segment
  // over the threshold (or budget) and returns when the manifest switch is durable.
  // Returns the kept background error if there is one.
  virtual Status CompactNow() = 0;

  // Blocks until the background thread has no compaction pending or running.
  virtual Status WaitForCompaction() = 0;

  // Returns at once when disk use is within DiskBound(); otherwise runs compaction (wakes
  // the background thread and waits for it to go idle, or compacts on this thread without
  // one) and returns when it can reclaim nothing more. *stats is the snapshot that was
  // checked last, so a caller that reports it reports a value within the bound whenever
  // the bound is reachable (see above). Returns the kept background error if there is one.
  virtual Status WaitForDiskBound(StoreStats* stats) = 0;

  // 2 x stats.live_bytes + segment_bytes.
  virtual uint64_t DiskBound(const StoreStats& stats) const = 0;

  // Number of segment files in the live set (for tests and metrics).
  virtual size_t num_segments() const = 0;
};

// Opens (recovering if needed) or creates the store in opts.dir. Fails with
// InvalidArgument when opts are bad or the directory was written with another row_bytes,
// Corruption when a listed segment or the manifest is damaged, and an I/O error naming the
// file otherwise.
Status OpenSsdStore(const SsdOptions& opts, std::unique_ptr<SsdStore>* out);

// As above, for callers that only need the RowStore interface.
Status OpenSsdStore(const SsdOptions& opts, std::unique_ptr<RowStore>* out);

}  // namespace strata
