// Segment: one open SSD-PS segment file and its counters. Appender: turns a stream of
// records into large unit-aligned writes to one segment at a time (format in
// strata/ssd/ssd_format.h), with a ring of buffers: full ones are written in the
// background, in order, while appends fill the next; a segment's roll to the next hands
// its last buffer over the same way, with no wait. Reads of records not yet on disk (in any
// buffer, of either segment, including the last partial unit) are served from memory. ScanSegment: the one
// sequential read-and-check of a segment's records, shared by recovery and compaction.
//
// Thread safety: a Segment's fd is immutable and may be used by any thread; `records` and
// `durable` are atomics written by the one thread that appends or commits; `live` is
// guarded by the store's index lock. An Appender is used by one thread at a time (its
// writer thread only reads the buffers it was handed).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ssd/background_writer.h"
#include "ssd/file_util.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd {

struct Segment {
  Segment(uint64_t number, std::string path, int fd, uint32_t slot)
      : number(number), path(std::move(path)), fd(fd), slot(slot) {}
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  const uint64_t number;
  const std::string path;
  const int fd;
  const uint32_t slot;                 // index into the store's segment table
  std::atomic<uint64_t> records{0};    // records appended so far
  std::atomic<uint64_t> durable{0};    // records covered by the committed manifest
  std::atomic<bool> sealed{false};     // no more appends; eligible for compaction once durable
  std::atomic<uint64_t> hold_until{0};  // not a compaction victim before this sync epoch
  uint64_t live = 0;                   // records the index points at (store's index lock)
};

// Opens dir/SegmentFileName(number): creates it (failing if it exists) when `create`,
// otherwise opens the existing file. O_DIRECT when `direct`.
Status OpenSegmentFile(const std::string& dir, uint64_t number, bool create, bool direct, int* fd);

// A run of consecutive records of one segment, checked and decoded by ScanSegment.
struct RecordChunk {
  uint64_t first = 0;               // record number of entry 0
  std::vector<uint64_t> keys;       // (n)
  std::vector<uint64_t> seqs;       // (n)
  std::vector<const uint8_t*> rows;  // (n) rows of row_bytes, into the scan buffer
  size_t size() const { return keys.size(); }
};

// Reads records [0, records) of `seg` in sequential chunks of a few MiB, checks every
// record's checksum and hands each chunk to `visit`, in record order; the chunk's row
// pointers are valid only during the call. A checksum mismatch, or a file too short to
// hold the records, is Corruption naming the file, the record and its offset; visit's
// first error stops the scan and is returned. Adds the bytes read to *bytes_read. Blocks
// on disk reads; callable from any thread (pread on the immutable fd).
Status ScanSegment(const Segment& seg, const RecordLayout& layout, uint64_t records,
                   const std::function<Status(const RecordChunk&)>& visit, std::atomic<uint64_t>* bytes_read);

class Appender {
 public:
  // `buffers` (at least 2) buffers, each of buffer_bytes rounded down to whole units (at
  // least one). bytes_written, if given, is advanced by every byte handed to the disk.
  Appender(const RecordLayout& layout, size_t buffer_bytes, size_t buffers, std::atomic<uint64_t>* bytes_written);

  // Starts appending to `next`, an empty segment (writes its header), in the ring's next
  // buffer. The segment appended to so far, if any, has its unwritten records handed to
  // the background write first (a partial last unit's free places zeroed), without a
  // wait; they stay readable from their buffer until written (Buffered).
  Status Roll(std::shared_ptr<Segment> next);
  // A ticket for Written: the records handed to the disk so far.
  uint64_t Ticket() const { return writer_.submitted(); }
  // Whether every record handed to the disk before `ticket` was taken is written, with no
  // write failed.
  bool Written(uint64_t ticket) { return writer_.Done(ticket); }
  // Appends one record; *record is its number in the segment. When the buffer is full it
  // is handed to the background write, and the next buffer of the ring is filled once
  // its own write is done (a failed write's error is returned here).
  Status Append(uint64_t key, uint64_t seq, const uint8_t* row, uint64_t* record) {
    return AppendRun(&key, seq, row, 1, record);
  }
  // Appends n records: keys[i] with sequence number first_seq + i and row rows + i *
  // row_bytes becomes record *first + i. REQUIRES: the segment has room for them.
  Status AppendRun(const uint64_t* keys, uint64_t first_seq, const uint8_t* rows, size_t n, uint64_t* first);
  // Waits for the background write, then writes every buffered record, the partial last
  // unit's free record places zeroed. On return every appended record is on disk.
  Status Flush();
  // The buffered copy of record `record` of `seg`, or nullptr when it is only on disk.
  const uint8_t* Buffered(const Segment& seg, uint64_t record) const;

  const std::shared_ptr<Segment>& segment() const { return seg_; }

 private:
  uint8_t* active() const { return bufs_[active_].get(); }
  // The number of the buffer handed `back` hand-overs ago (1: the last one).
  size_t handed(size_t back) const { return (active_ + bufs_.size() - back) % bufs_.size(); }
  Status WriteUnits(size_t units);
  // Zeroes the free record places of the partial last unit of the active buffer's `units`.
  void ZeroPartialUnit(size_t units);
  // Hands the active buffer's first `units` to the background write and fills the next
  // buffer once its own write is done.
  Status HandOver(size_t units);
  // Starts appending to `seg` (empty) in the active buffer: writes its header.
  Status Begin(std::shared_ptr<Segment> seg);

  const RecordLayout layout_;
  const size_t buffer_units_;
  std::atomic<uint64_t>* bytes_written_;
  std::vector<AlignedBuffer> bufs_;
  size_t active_ = 0;             // the buffer appends fill
  std::shared_ptr<Segment> seg_;
  uint64_t first_unit_ = 0;       // unit number of the active buffer's first unit
  struct Held {                   // what a handed buffer holds
    uint64_t segment = 0;         // its number
    uint64_t first_unit = 0;
    size_t units = 0;
  };
  std::vector<Held> held_;        // by buffer
  size_t handed_ = 0;             // buffers before the active one whose units (held_) may
                                  // not be on disk yet
  uint64_t flushed_records_ = 0;  // records already written by the last Flush
  BackgroundWriter writer_;       // last: it finishes with the buffers and segment still alive
};

}  // namespace strata::ssd
