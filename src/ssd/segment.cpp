// Segment files and the record appender (see segment.h).
#include "ssd/segment.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace strata::ssd {
namespace {

constexpr size_t kScanChunkBytes = 4 << 20;  // sequential read size when scanning a segment

// Decodes records [chunk->first, chunk->first + n) of the units in `buf`, which start at
// file offset `offset`, a group at a time (their checksums side by side).
Status DecodeChunk(const Segment& seg, const RecordLayout& layout, const uint8_t* buf, uint64_t offset,
                   size_t n, RecordChunk* chunk) {
  chunk->keys.resize(n);
  chunk->seqs.resize(n);
  chunk->rows.resize(n);
  for (size_t i = 0; i < n; i += kMaxRecordsAtOnce) {
    const size_t group = std::min(kMaxRecordsAtOnce, n - i);
    const uint8_t* src[kMaxRecordsAtOnce];
    for (size_t k = 0; k < group; ++k) {
      src[k] = buf + (layout.Offset(chunk->first + i + k) - offset);
      chunk->rows[i + k] = src[k] + kRecordRowOffset;
    }
    const size_t intact = DecodeRecords(src, group, layout.row_bytes, &chunk->keys[i], &chunk->seqs[i]);
    if (intact < group) {
      const uint64_t r = chunk->first + i + intact;
      return Status::Corruption(seg.path + ": record " + std::to_string(r) + " at offset " +
                                std::to_string(layout.Offset(r)) + ": checksum mismatch");
    }
  }
  return Status::OK();
}

}  // namespace

Segment::~Segment() { ::close(fd); }

Status ScanSegment(const Segment& seg, const RecordLayout& layout, uint64_t records,
                   const std::function<Status(const RecordChunk&)>& visit, std::atomic<uint64_t>* bytes_read) {
  const uint64_t units = (records + layout.per_unit - 1) / layout.per_unit;
  const size_t chunk_units = static_cast<size_t>(
      std::clamp<uint64_t>(units, 1, std::max<size_t>(1, kScanChunkBytes / layout.unit_bytes)));
  AlignedBuffer buf = NewAlignedBuffer(chunk_units * layout.unit_bytes);
  RecordChunk chunk;
  for (uint64_t u = 0; u < units; u += chunk_units) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_units, units - u));
    const uint64_t offset = kHeaderBytes + u * layout.unit_bytes;
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(PreadAll(seg.fd, buf.get(), n * layout.unit_bytes, offset, seg.path, &got));
    *bytes_read += got;
    if (got < n * layout.unit_bytes) {
      return Status::Corruption(seg.path + ": truncated, short read at offset " + std::to_string(offset));
    }
    chunk.first = u * layout.per_unit;
    const uint64_t end = std::min(records, (u + n) * layout.per_unit);
    STRATA_RETURN_IF_ERROR(DecodeChunk(seg, layout, buf.get(), offset, static_cast<size_t>(end - chunk.first), &chunk));
    STRATA_RETURN_IF_ERROR(visit(chunk));
  }
  return Status::OK();
}

Status OpenSegmentFile(const std::string& dir, uint64_t number, bool create, bool direct, int* fd) {
  const std::string path = dir + "/" + SegmentFileName(number);
  int flags = O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0);
  if (create) flags |= O_CREAT | O_EXCL;
  *fd = ::open(path.c_str(), flags, 0644);
  if (*fd < 0) {
    const int err = errno;
    if (err == ENOENT && !create) return Status::Corruption(path + ": missing, but listed in MANIFEST");
    return ErrnoStatus((create ? "create " : "open ") + path, err);
  }
  return Status::OK();
}

Appender::Appender(const RecordLayout& layout, size_t buffer_bytes, size_t buffers, std::atomic<uint64_t>* bytes_written)
    : layout_(layout), buffer_units_(std::max<size_t>(1, buffer_bytes / layout.unit_bytes)), bytes_written_(bytes_written) {
  for (size_t i = 0; i < std::max<size_t>(2, buffers); ++i) bufs_.push_back(NewAlignedBuffer(buffer_units_ * layout.unit_bytes));
  held_.resize(bufs_.size());
}

Status Appender::Roll(std::shared_ptr<Segment> next) {
  if (seg_ != nullptr) {
    const uint64_t r = seg_->records.load(std::memory_order_relaxed);
    const uint64_t end_unit = (r + layout_.per_unit - 1) / layout_.per_unit;  // exclusive
    if (r != flushed_records_ && end_unit > first_unit_) {
      const size_t units = static_cast<size_t>(end_unit - first_unit_);
      ZeroPartialUnit(units);
      STRATA_RETURN_IF_ERROR(HandOver(units));
    }
  }
  return Begin(std::move(next));
}

Status Appender::Begin(std::shared_ptr<Segment> seg) {
  seg_ = std::move(seg);
  first_unit_ = 0;
  flushed_records_ = 0;
  std::memset(active(), 0, buffer_units_ * layout_.unit_bytes);
  AlignedBuffer header = NewAlignedBuffer(kHeaderBytes);
  EncodeSegmentHeader(header.get(), layout_, seg_->number);
  STRATA_RETURN_IF_ERROR(PwriteAll(seg_->fd, header.get(), kHeaderBytes, 0, seg_->path));
  if (bytes_written_) *bytes_written_ += kHeaderBytes;
  return Status::OK();
}

Status Appender::WriteUnits(size_t units) {
  const size_t bytes = units * layout_.unit_bytes;
  STRATA_RETURN_IF_ERROR(PwriteAll(seg_->fd, active(), bytes, kHeaderBytes + first_unit_ * layout_.unit_bytes, seg_->path));
  if (bytes_written_) *bytes_written_ += bytes;
  return Status::OK();
}

// Every record place of a full buffer is written, and the units' pads stay zero from the
// buffers' allocation (Flush zeroes a partial unit's free places), so a buffer is reused
// without clearing it. Records are encoded (and published) a group at a time, up to the
// buffer's end, so their checksums are computed side by side.
Status Appender::AppendRun(const uint64_t* keys, uint64_t first_seq, const uint8_t* rows, size_t n, uint64_t* first) {
  const uint64_t r = seg_->records.load(std::memory_order_relaxed);
  *first = r;
  uint64_t unit = r / layout_.per_unit - first_unit_;  // walked on, not divided again
  size_t place = r % layout_.per_unit;
  uint8_t* dst[kMaxRecordsAtOnce];
  for (size_t i = 0; i < n;) {
    if (unit == buffer_units_) {
      STRATA_RETURN_IF_ERROR(HandOver(buffer_units_));
      unit = 0;
    }
    size_t group = 0;
    for (; group < kMaxRecordsAtOnce && i + group < n && unit < buffer_units_; ++group) {
      dst[group] = active() + unit * layout_.unit_bytes + place * layout_.record_bytes;
      if (++place == layout_.per_unit) place = 0, ++unit;
    }
    EncodeRecords(dst, keys + i, first_seq + i, rows + i * layout_.row_bytes, group, layout_.row_bytes);
    i += group;
    seg_->records.store(r + i, std::memory_order_release);
  }
  return Status::OK();
}

Status Appender::HandOver(size_t units) {
  // The next buffer, the oldest handed one once the ring is full, must be on disk first.
  STRATA_RETURN_IF_ERROR(writer_.Wait(bufs_.size() - 2));
  const size_t bytes = units * layout_.unit_bytes;
  writer_.Submit(seg_->fd, active(), bytes, kHeaderBytes + first_unit_ * layout_.unit_bytes, seg_->path);
  if (bytes_written_) *bytes_written_ += bytes;
  held_[active_] = Held{seg_->number, first_unit_, units};
  handed_ = std::min(handed_ + 1, bufs_.size() - 1);
  active_ = (active_ + 1) % bufs_.size();
  first_unit_ += units;
  return Status::OK();
}

Status Appender::Flush() {
  STRATA_RETURN_IF_ERROR(writer_.Wait());
  handed_ = 0;
  const uint64_t r = seg_->records.load(std::memory_order_relaxed);
  const uint64_t end_unit = (r + layout_.per_unit - 1) / layout_.per_unit;  // exclusive
  if (r == flushed_records_ || end_unit == first_unit_) return Status::OK();
  const size_t units = static_cast<size_t>(end_unit - first_unit_);
  ZeroPartialUnit(units);
  STRATA_RETURN_IF_ERROR(WriteUnits(units));
  flushed_records_ = r;
  const size_t full = static_cast<size_t>(r / layout_.per_unit - first_unit_);
  if (full > 0) {
    // Keep the partial last unit (if any) at the front; later appends rewrite it.
    const size_t keep = units - full;
    std::memmove(active(), active() + full * layout_.unit_bytes, keep * layout_.unit_bytes);
    first_unit_ += full;
  }
  return Status::OK();
}

void Appender::ZeroPartialUnit(size_t units) {
  const uint64_t r = seg_->records.load(std::memory_order_relaxed);
  if (const size_t used = r % layout_.per_unit; used > 0) {  // stale records of the buffer's last use
    uint8_t* last = active() + (units - 1) * layout_.unit_bytes;
    std::memset(last + used * layout_.record_bytes, 0, (layout_.per_unit - used) * layout_.record_bytes);
  }
}

const uint8_t* Appender::Buffered(const Segment& seg, uint64_t record) const {
  if (record >= seg.records.load(std::memory_order_acquire)) return nullptr;
  const uint64_t unit = record / layout_.per_unit;
  const size_t place = (record % layout_.per_unit) * layout_.record_bytes;
  if (&seg == seg_.get() && unit >= first_unit_) return active() + (unit - first_unit_) * layout_.unit_bytes + place;
  for (size_t back = 1; back <= handed_; ++back) {
    const size_t b = handed(back);
    const Held& h = held_[b];
    if (h.segment == seg.number && unit >= h.first_unit && unit < h.first_unit + h.units) {
      return bufs_[b].get() + (unit - h.first_unit) * layout_.unit_bytes + place;
    }
  }
  return nullptr;
}

}  // namespace strata::ssd
