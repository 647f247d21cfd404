// SSD-PS: the per-rank store of every row a rank owns, kept in a directory of append-only
// segment files (format drawn in strata/ssd/ssd_format.h). Updated rows are appended as new
// records in large sequential writes; a DRAM index maps key -> newest record; per-segment
// live counters drive a background compaction thread that rewrites segments whose stale
// fraction passes `compact_threshold` (or all the most stale ones while disk use is over
// `disk_budget_bytes`) and deletes the old files only after the manifest switch is durable.
//
// Promises:
//   - Get sees every Put before it, synced or not. Keys never written are reported
//     not-found without disk I/O.
//   - After a crash at any instant (mid-append, mid-compaction, mid-manifest), opening the
//     directory recovers exactly the rows of the last completed Sync(): newest synced
//     values, nothing written after it, nothing resurrected from a compacted-away segment.
//   - Every record read back is checksummed; damage is reported as Corruption naming the
//     file, never returned as a row.
//   - The first write or background error (disk full, I/O error, corruption found by the
//     compactor) is kept: later Put/Sync/CompactNow return it; Get and Scan keep working.
//
// Thread safety: as RowStore: Get may run concurrently with Get; Put, Sync and Scan need
// external serialization against every other call. CompactNow, WaitForCompaction, stats,
// num_keys and num_segments may be called from any thread at any time; the compaction
// thread runs beside everything.
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
  double compact_threshold = 0.5;        // stale fraction that makes a segment a victim;
                                         // 0.5 bounds disk use to about 2x live records
  uint64_t disk_budget_bytes = 0;        // compact the most stale segments while over; 0 = none
  bool direct_io = false;                // O_DIRECT reads and writes (bypass the page cache)
  int queue_depth = 64;                  // reads kept in flight by one Get
  size_t write_buffer_bytes = 4ull << 20;  // appends are issued in writes of this size
  bool background_compaction = true;     // false: only CompactNow() compacts (tests)
};

class SsdStore : public RowStore {
 public:
  // Runs one compaction round now on the calling thread's behalf: rewrites every segment
  // over the threshold (or budget) and returns when the manifest switch is durable.
  // Returns the kept background error if there is one.
  virtual Status CompactNow() = 0;

  // Blocks until the background thread has no compaction pending or running.
  virtual Status WaitForCompaction() = 0;

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
