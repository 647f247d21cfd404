// SsdStoreImpl: the SSD-PS behind strata/ssd/ssd_store.h. This header is private to
// src/ssd; ssd_store.cpp holds open/recovery and the read and write paths,
// ssd_compaction.cpp the background compaction and the manifest commit they share.
//
// Locks, always taken in this order when nested:
//   compact_mu_   one compaction at a time (background thread or CompactNow); Scan
//                 holds it too, so no record moves under a scan.
//   manifest_mu_  serializes manifest commits (Sync, compaction) and the segment-set
//                 changes that go with them; held across the commit's file I/O.
//   append_mu_    user_: held by Put across its appends and by Get while it copies
//                 records still in user_'s buffers (Sync and Scan, which no Get runs
//                 beside, flush without it).
//   index_mu_     (shared) index_, slots_ and every Segment::live. Gets hold it shared
//                 only while looking up locations, never across disk reads; Put holds it
//                 across its upserts and the appends that run beside them, so a Get sees
//                 a new location only once its record is appended.
//   mu_           background-thread state and bg_error_.
// The rest of the append path (unsynced_, rolled_, next_seq_) belongs to the caller of
// Put/Sync, which is serialized externally.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "ssd/batch_reader.h"
#include "ssd/compact_index.h"
#include "ssd/location.h"
#include "ssd/record_index.h"
#include "ssd/segment.h"
#include "strata/common/dir_lock.h"
#include "strata/common/spare_threads.h"
#include "strata/ssd/ssd_store.h"

namespace strata::ssd {

class SsdStoreImpl final : public SsdStore {
 public:
  explicit SsdStoreImpl(const SsdOptions& opts);
  ~SsdStoreImpl() override;  // stops the compactor; unsynced Puts are dropped

  Status Open();

  size_t row_bytes() const override { return opts_.row_bytes; }
  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override;
  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override;
  Status PutKnown(const uint64_t* keys, size_t n, const uint8_t* rows, const uint8_t* in_store) override;
  bool GetsBesidePuts() const override { return true; }
  Status Sync() override;
  Status Erase(const uint64_t* keys, size_t n) override;
  Status Scan(const std::function<void(uint64_t key, const uint8_t* row)>& visit) override;
  uint64_t num_keys() const override;
  StoreStats stats() const override;
  Status CompactNow() override;
  Status WaitForCompaction() override;
  Status WaitForDiskBound(StoreStats* stats) override;
  uint64_t DiskBound(const StoreStats& stats) const override;
  size_t num_segments() const override;

 private:
  using SegmentPtr = std::shared_ptr<Segment>;
  void LookUp(const uint64_t* keys, size_t n, uint8_t* found, std::vector<std::pair<uint32_t, size_t>>* wants,
              std::vector<SegmentPtr>* segs);
  Status CopyRecord(const ReadOp& op, const uint8_t* data, uint32_t loc, uint64_t want_key, uint8_t* row,
                    uint8_t* found) const;
  // in_store[i] = whether keys[i] is in the store: from the index alone when it is sure,
  // else by reading the candidate record.
  Status InStore(const uint64_t* keys, size_t n, uint8_t* in_store);
  // Visits the live records of one segment. REQUIRES: compact_mu_ held, nothing appending.
  Status ScanLive(const Segment& seg, const std::function<void(uint64_t key, const uint8_t* row)>& visit);

  // --- ssd_store.cpp
  Status Recover();
  // The location codec for segments of opts_.segment_bytes and of up to `listed` records.
  void ChooseLocationCodec(uint64_t listed);
  Status LoadSegment(uint64_t number, uint64_t records, RecordIndex* seqs);
  Status RemoveUnlisted(const std::vector<std::string>& names, const ManifestData& m);
  Status SlotsExhausted() const;         // no location can name another segment
  Status NewSegment(SegmentPtr* out);    // creates the file and takes a table slot
  void DropSegments(const std::vector<SegmentPtr>& segs);  // REQUIRES: index_mu_ held
  // Hands the user segment's last records to the disk (its seal: at once, or left to
  // SealRolled) and starts appending to next.
  Status RollUserSegment(SegmentPtr next);
  // Seals the rolled segments whose records are all on disk.
  void SealRolled();
  struct PlannedRun {  // records a put appends to one segment
    SegmentPtr segment;
    size_t records;
    uint64_t first;  // the first one's record number
  };
  Status PlanAppends(size_t n, uint32_t* locs, std::vector<PlannedRun>* plan);
  Status AppendPlanned(const std::vector<PlannedRun>& plan, const uint64_t* keys, const uint8_t* rows);
  void UndoUpserts(const uint64_t* keys, size_t n, const uint32_t* locs, const uint8_t* had, const uint32_t* old);
  Status KeepError(const Status& st);    // records the first error, returns it
  Status error() const;
  bool shutting_down() const;
  std::unique_ptr<BatchReader> TakeReader();
  void ReturnReader(std::unique_ptr<BatchReader> r);

  // --- ssd_compaction.cpp
  // Writes the manifest of the durable set: every segment's `durable` count, with
  // `records` for those in `promote`, without `drop`. REQUIRES: manifest_mu_ held.
  Status CommitManifest(const std::vector<SegmentPtr>& promote, const std::vector<SegmentPtr>& drop);
  void BackgroundLoop();
  void Schedule();
  Status CompactRounds();                // REQUIRES: compact_mu_ held
  std::vector<SegmentPtr> PickVictims();
  // A sealed segment compaction may rewrite.
  struct Candidate {
    double score;         // the larger, the sooner: stale fraction (durable), else the
                          // fraction of its extent a rewrite frees
    double stale;         // fraction of its records superseded
    uint64_t extent;      // file bytes
    uint64_t live;        // records the index points at
    uint64_t live_bytes;  // unit bytes those take packed
    SegmentPtr seg;
  };
  // Candidates, best first; *disk is the extent of every segment, *live_keys the index size.
  std::vector<Candidate> Candidates(uint64_t* disk, uint64_t* live_keys);
  // Disk use compaction holds the store to: DiskBound less half a segment of headroom,
  // or disk_budget_bytes when that is set and lower.
  uint64_t CompactionTarget(uint64_t live_keys) const;
  // Bytes of the segments a round writes to hold `records` records.
  uint64_t OutputExtent(uint64_t records) const;
  uint64_t LiveBytes(uint64_t live_keys) const { return live_keys * layout_.unit_bytes / layout_.per_unit; }

  // One compaction round's outputs, being written, and the copies made into them.
  struct Round {
    struct Copy {
      uint64_t key;
      uint32_t from, to;  // locations: the victim's record and its copy
    };
    Round(const RecordLayout& layout, size_t buffer_bytes, uint64_t sync_epoch)
        : out(layout, buffer_bytes, SsdOptions::kCompactionWriteBuffers, &out_bytes), epoch(sync_epoch) {}
    std::atomic<uint64_t> out_bytes{0};
    std::vector<SegmentPtr> outputs;  // before out: their files stay open until its writes end
    Appender out;
    std::vector<Copy> copies;
    const uint64_t epoch;  // sync epoch when the round began
    bool hold = false;     // some copy is superseded by a record the next Sync makes durable
  };
  // Copies the victims' records that must survive into new segments, then switches.
  Status Rewrite(const std::vector<SegmentPtr>& victims);
  Status CopyLive(const Segment& v, const RecordChunk& c, Round* round);
  Status AppendCopy(uint64_t key, uint64_t seq, const uint8_t* row, uint32_t from, Round* round);
  // Syncs the outputs, commits the manifest swap, moves the index and unlinks the victims.
  Status FinishRound(const std::vector<SegmentPtr>& victims, Round* round);
  // Deletes the round's outputs; returns st.
  Status AbandonRound(Round* round, const Status& st);

  const SsdOptions opts_;
  std::unique_ptr<DirLock> lock_;  // this store's claim on opts_.dir, held while open
  const RecordLayout layout_;
  std::atomic<uint64_t> next_file_{1};
  std::atomic<uint64_t> sync_epoch_{0};   // completed Sync commits

  std::mutex compact_mu_;
  std::mutex manifest_mu_;

  std::mutex readers_mu_;
  std::vector<std::unique_ptr<BatchReader>> readers_;  // idle readers, guarded by readers_mu_

  mutable std::shared_mutex index_mu_;
  SpareThreads index_threads_;            // SsdOptions::threads, for a large Put's index updates
  LocationCodec codec_;                   // set by Recover
  CompactIndex index_;                    // guarded by index_mu_
  std::vector<SegmentPtr> slots_;         // guarded by index_mu_; nullptr = free slot
  std::vector<uint32_t> free_slots_;      // guarded by index_mu_

  mutable std::mutex mu_;
  std::condition_variable bg_cv_;         // wakes the compactor
  std::condition_variable idle_cv_;       // signals the compactor went idle
  bool bg_pending_ = false;               // guarded by mu_
  bool bg_running_ = false;               // guarded by mu_
  bool shutting_down_ = false;            // guarded by mu_
  Status bg_error_;                       // guarded by mu_
  std::thread bg_thread_;

  // Append path, owned by the Put/Sync caller.
  std::mutex append_mu_;
  Appender user_;                         // guarded by append_mu_
  std::vector<SegmentPtr> unsynced_;      // sealed since the last Sync, not yet fdatasync'ed
  struct Rolled {                         // a cache's full segment, not sealed yet
    SegmentPtr segment;
    uint64_t ticket;                      // user_.Written(ticket): its records are on disk
  };
  std::vector<Rolled> rolled_;            // sealed by SealRolled at the end of a Put
  uint64_t next_seq_ = 1;

  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> user_bytes_written_{0};
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> compaction_bytes_{0};
};

}  // namespace strata::ssd
