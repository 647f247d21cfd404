// SSD-PS open/recovery and the read and write paths (see ssd_store_impl.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "ssd/ssd_store_impl.h"

namespace strata::ssd {
namespace {

constexpr size_t kMaxReadBytes = 64 << 10;       // largest coalesced read
constexpr uint64_t kMaxGapUnits = 1;             // units read in between to merge two reads

}  // namespace

SsdStoreImpl::SsdStoreImpl(const SsdOptions& opts)
    : opts_(opts),
      layout_(RecordLayout::For(opts.row_bytes)),
      index_threads_(opts.threads),
      user_(layout_, opts.write_buffer_bytes, opts.write_buffers, &bytes_written_) {}

SsdStoreImpl::~SsdStoreImpl() {
  {
    std::lock_guard lk(mu_);
    shutting_down_ = true;
  }
  bg_cv_.notify_all();
  if (bg_thread_.joinable()) bg_thread_.join();
}

Status SsdStoreImpl::Open() {
  if (opts_.dir.empty()) return Status::InvalidArgument("ssd store: SsdOptions.dir is empty");
  if (opts_.row_bytes == 0 || opts_.row_bytes > (1u << 24)) {
    return Status::InvalidArgument(opts_.dir + ": row_bytes must be in [1, 16777216], got " +
                                   std::to_string(opts_.row_bytes));
  }
  if (opts_.segment_bytes < layout_.ExtentBytes(2 * layout_.per_unit)) {
    return Status::InvalidArgument(opts_.dir + ": segment_bytes " + std::to_string(opts_.segment_bytes) +
                                   " too small for two units of records");
  }
  if (!kCompactThresholdRange.Contains(opts_.compact_threshold)) {
    return Status::InvalidArgument(opts_.dir + ": --ssd-compact-threshold must be in " +
                                   kCompactThresholdRange.ToString() + ", got " +
                                   std::to_string(opts_.compact_threshold));
  }
  std::error_code ec;
  std::filesystem::create_directories(opts_.dir, ec);
  if (ec) return Status::IOError("create directory " + opts_.dir + ": " + ec.message());
  STRATA_RETURN_IF_ERROR(DirLock::Acquire(opts_.dir, "SSD-PS directory", &lock_));
  STRATA_RETURN_IF_ERROR(Recover());
  if (opts_.background_compaction) {
    bg_thread_ = std::thread(&SsdStoreImpl::BackgroundLoop, this);
    Schedule();
  }
  return Status::OK();
}

Status SsdStoreImpl::Recover() {
  std::vector<std::string> names;
  STRATA_RETURN_IF_ERROR(ListDir(opts_.dir, &names));
  const std::string manifest_path = opts_.dir + "/" + kManifestName;
  ManifestData m;
  if (!opts_.durable) {
    ChooseLocationCodec(0);
    // A cache starts empty: everything an earlier store left here is unlisted.
    for (const std::string& name : names) next_file_ = std::max<uint64_t>(next_file_, ParseSegmentFileName(name) + 1);
    return RemoveUnlisted(names, m);
  }
  if (std::find(names.begin(), names.end(), kManifestName) != names.end()) {
    std::string bytes;
    STRATA_RETURN_IF_ERROR(ReadWholeFile(manifest_path, &bytes));
    STRATA_RETURN_IF_ERROR(DecodeManifest(manifest_path, bytes, &m));
    if (m.row_bytes != opts_.row_bytes) {
      return Status::InvalidArgument(opts_.dir + ": store was written with row_bytes " +
                                     std::to_string(m.row_bytes) + ", opened with row_bytes " +
                                     std::to_string(opts_.row_bytes));
    }
  } else {
    m.row_bytes = static_cast<uint32_t>(opts_.row_bytes);
  }
  uint64_t next = m.next_file_number;
  for (const std::string& name : names) next = std::max(next, ParseSegmentFileName(name) + 1);
  next_file_ = next;
  uint64_t listed = 0;
  for (const auto& seg : m.segments) listed = std::max(listed, seg.second);
  ChooseLocationCodec(listed);
  // Segments first (a bad one fails the open before anything is deleted), then cleanup.
  RecordIndex seqs;
  for (const auto& [number, records] : m.segments) {
    STRATA_RETURN_IF_ERROR(LoadSegment(number, records, &seqs));
  }
  index_.ForEachLocation([this](uint32_t loc) { ++slots_[codec_.Slot(loc)]->live; });
  {
    // Records next_file_ (so numbers of leftovers are never reused) before they go.
    std::lock_guard lk(manifest_mu_);
    STRATA_RETURN_IF_ERROR(CommitManifest({}, {}));
  }
  return RemoveUnlisted(names, m);
}

void SsdStoreImpl::ChooseLocationCodec(uint64_t listed) {
  const uint64_t units = (opts_.segment_bytes - kHeaderBytes) / layout_.unit_bytes;
  codec_ = LocationCodec(std::max(listed, units * layout_.per_unit));
}

Status SsdStoreImpl::SlotsExhausted() const {
  return Status::ResourceExhausted(opts_.dir + ": all " + std::to_string(codec_.max_slots()) +
                                   " segments the index can address are in use");
}

Status SsdStoreImpl::LoadSegment(uint64_t number, uint64_t records, RecordIndex* seqs) {
  int fd = -1;
  STRATA_RETURN_IF_ERROR(OpenSegmentFile(opts_.dir, number, /*create=*/false, opts_.direct_io, &fd));
  if (slots_.size() >= codec_.max_slots()) {
    ::close(fd);
    return SlotsExhausted();
  }
  auto seg = std::make_shared<Segment>(number, opts_.dir + "/" + SegmentFileName(number), fd,
                                       static_cast<uint32_t>(slots_.size()));
  slots_.push_back(seg);
  seg->records = records;
  seg->durable = records;
  seg->sealed = true;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus("stat " + seg->path, errno);
  const uint64_t extent = layout_.ExtentBytes(records);
  if (static_cast<uint64_t>(st.st_size) < extent) {
    return Status::Corruption(seg->path + ": truncated to " + std::to_string(st.st_size) +
                              " bytes, MANIFEST lists " + std::to_string(records) +
                              " records needing " + std::to_string(extent));
  }
  if (static_cast<uint64_t>(st.st_size) > extent && ::ftruncate(fd, static_cast<off_t>(extent)) != 0) {
    return ErrnoStatus("drop unsynced tail of " + seg->path, errno);
  }
  AlignedBuffer header = NewAlignedBuffer(kHeaderBytes);
  size_t got = 0;
  STRATA_RETURN_IF_ERROR(PreadAll(fd, header.get(), kHeaderBytes, 0, seg->path, &got));
  STRATA_RETURN_IF_ERROR(CheckSegmentHeader(seg->path, header.get(), opts_.row_bytes, number));
  return ScanSegment(*seg, layout_, records, [&](const RecordChunk& c) {
    for (size_t i = 0; i < c.size(); ++i) {
      uint64_t prev = 0, unused = 0;
      const bool indexed = seqs->Find(c.keys[i], &prev);
      if (!indexed || c.seqs[i] > prev) {
        seqs->Upsert(c.keys[i], c.seqs[i], &unused);
        uint32_t old = 0;
        index_.Upsert(c.keys[i], indexed, codec_.Make(seg->slot, c.first + i), &old);
      }
      next_seq_ = std::max(next_seq_, c.seqs[i] + 1);
    }
    return Status::OK();
  }, &bytes_read_);
}

Status SsdStoreImpl::RemoveUnlisted(const std::vector<std::string>& names, const ManifestData& m) {
  std::set<uint64_t> listed;
  for (const auto& seg : m.segments) listed.insert(seg.first);
  for (const std::string& name : names) {
    const uint64_t number = ParseSegmentFileName(name);
    const bool manifest = name == kManifestName || name == kManifestTmpName;
    const bool keep = manifest ? (name == kManifestName && opts_.durable) : (number == 0 || listed.count(number));
    if (keep) continue;
    const std::string path = opts_.dir + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("remove leftover " + path, errno);
  }
  return Status::OK();
}

Status SsdStoreImpl::NewSegment(SegmentPtr* out) {
  const uint64_t number = next_file_++;
  int fd = -1;
  STRATA_RETURN_IF_ERROR(OpenSegmentFile(opts_.dir, number, /*create=*/true, opts_.direct_io, &fd));
  std::unique_lock lk(index_mu_);
  uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else if (slots_.size() < codec_.max_slots()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    ::close(fd);
    ::unlink((opts_.dir + "/" + SegmentFileName(number)).c_str());
    return SlotsExhausted();
  }
  slots_[slot] = std::make_shared<Segment>(number, opts_.dir + "/" + SegmentFileName(number), fd, slot);
  *out = slots_[slot];
  return Status::OK();
}

void SsdStoreImpl::DropSegments(const std::vector<SegmentPtr>& segs) {
  for (const SegmentPtr& seg : segs) {
    assert(slots_[seg->slot] == seg);
    slots_[seg->slot] = nullptr;
    free_slots_.push_back(seg->slot);
  }
}

Status SsdStoreImpl::KeepError(const Status& st) {
  std::lock_guard lk(mu_);
  if (bg_error_.ok()) bg_error_ = st;
  idle_cv_.notify_all();
  return st;
}

Status SsdStoreImpl::error() const {
  std::lock_guard lk(mu_);
  return bg_error_;
}

bool SsdStoreImpl::shutting_down() const {
  std::lock_guard lk(mu_);
  return shutting_down_;
}

std::unique_ptr<BatchReader> SsdStoreImpl::TakeReader() {
  {
    std::lock_guard lk(readers_mu_);
    if (!readers_.empty()) {
      auto r = std::move(readers_.back());
      readers_.pop_back();
      return r;
    }
  }
  return std::make_unique<BatchReader>(opts_.queue_depth, std::max(kMaxReadBytes, layout_.unit_bytes));
}

void SsdStoreImpl::ReturnReader(std::unique_ptr<BatchReader> r) {
  std::lock_guard lk(readers_mu_);
  readers_.push_back(std::move(r));
}

// wants = (location, position in keys) of the keys found, sorted by location; segs = the
// segment slots they refer to, pinned by the copy.
void SsdStoreImpl::LookUp(const uint64_t* keys, size_t n, uint8_t* found,
                          std::vector<std::pair<uint32_t, size_t>>* wants, std::vector<SegmentPtr>* segs) {
  wants->reserve(n);
  {
    std::shared_lock lk(index_mu_);
    index_.ForEachPrefetched(keys, n, [&](size_t i) {
      uint32_t loc = 0;
      found[i] = index_.Find(keys[i], &loc);
      if (found[i]) wants->emplace_back(loc, i);
    });
    if (!wants->empty()) *segs = slots_;
  }
  std::sort(wants->begin(), wants->end());
}

// The record at loc, read into data (op's bytes) and checked: its row goes to row when it
// holds want_key; otherwise the index's candidate was another key's and *found becomes 0.
Status SsdStoreImpl::CopyRecord(const ReadOp& op, const uint8_t* data, uint32_t loc, uint64_t want_key,
                                uint8_t* row, uint8_t* found) const {
  const size_t rb = opts_.row_bytes;
  const uint64_t at = layout_.Offset(codec_.Record(loc));
  const uint8_t* p = data + (at - op.offset);
  uint64_t key = 0, seq = 0;
  if (!DecodeRecord(p, rb, &key, &seq)) {
    return Status::Corruption(*op.path + ": record " + std::to_string(codec_.Record(loc)) + " at offset " +
                              std::to_string(at) + ": checksum mismatch");
  }
  if (key != want_key) {
    *found = 0;
    return Status::OK();
  }
  std::memcpy(row, p + kRecordRowOffset, rb);
  return Status::OK();
}

Status SsdStoreImpl::Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) {
  std::vector<std::pair<uint32_t, size_t>> wants;  // (location, position in keys)
  std::vector<SegmentPtr> segs;
  LookUp(keys, n, found, &wants, &segs);
  const size_t rb = opts_.row_bytes;
  std::unique_lock append_lock(append_mu_);  // a Put may be appending beside this Get
  // Coalesce records of neighbouring units into one read; op_end[k] is the end of op k's
  // range in `disk`.
  std::vector<std::pair<uint32_t, size_t>> disk;
  std::vector<ReadOp> ops;
  std::vector<size_t> op_end;
  const size_t max_read = std::max(kMaxReadBytes, layout_.unit_bytes);
  for (const auto& [loc, i] : wants) {
    const Segment* seg = segs[codec_.Slot(loc)].get();
    assert(seg != nullptr);
    const uint64_t rec = codec_.Record(loc);
    if (const uint8_t* p = user_.Buffered(*seg, rec)) {
      uint64_t key = 0, seq = 0;
      [[maybe_unused]] const bool intact = DecodeRecord(p, rb, &key, &seq);
      assert(intact);  // encoded by this process, never read from disk
      if (key == keys[i]) {
        std::memcpy(rows + i * rb, p + kRecordRowOffset, rb);
      } else {
        found[i] = 0;
      }
      continue;
    }
    const uint64_t unit_at = kHeaderBytes + rec / layout_.per_unit * layout_.unit_bytes;
    ReadOp* last = ops.empty() ? nullptr : &ops.back();
    if (last != nullptr && last->fd == seg->fd &&
        unit_at <= last->offset + last->length + kMaxGapUnits * layout_.unit_bytes &&
        unit_at + layout_.unit_bytes - last->offset <= max_read) {
      last->length = static_cast<uint32_t>(std::max<uint64_t>(last->length, unit_at + layout_.unit_bytes - last->offset));
    } else {
      ops.push_back(ReadOp{seg->fd, unit_at, static_cast<uint32_t>(layout_.unit_bytes), &seg->path});
      op_end.push_back(disk.size());
    }
    disk.emplace_back(loc, i);
    op_end.back() = disk.size();
  }
  append_lock.unlock();
  if (ops.empty()) return Status::OK();
  uint64_t read_bytes = 0;
  for (const ReadOp& op : ops) read_bytes += op.length;
  bytes_read_ += read_bytes;
  std::unique_ptr<BatchReader> reader = TakeReader();
  Status st = reader->Run(ops, [&](size_t k, const uint8_t* data) -> Status {
    for (size_t d = k == 0 ? 0 : op_end[k - 1]; d < op_end[k]; ++d) {
      const auto [loc, i] = disk[d];
      STRATA_RETURN_IF_ERROR(CopyRecord(ops[k], data, loc, keys[i], rows + i * rb, found + i));
    }
    return Status::OK();
  });
  ReturnReader(std::move(reader));
  return st;
}

// A durable store's sealed segment is compactable once Sync, which waits for every write,
// makes it durable; a cache's once Put sees its records written (SealRolled).
Status SsdStoreImpl::RollUserSegment(SegmentPtr next) {
  SegmentPtr cur = user_.segment();
  STRATA_RETURN_IF_ERROR(user_.Roll(std::move(next)));
  if (cur == nullptr) return Status::OK();
  if (opts_.durable) {
    cur->sealed = true;
    unsynced_.push_back(std::move(cur));
  } else {
    rolled_.push_back(Rolled{std::move(cur), user_.Ticket()});
  }
  return Status::OK();
}

// Compaction reads a sealed segment from its file, so a cache seals a rolled segment once
// its records are on disk, and once the index points at them (a sealed segment with
// records the index does not know yet would look all stale to the compactor).
void SsdStoreImpl::SealRolled() {
  std::erase_if(rolled_, [&](const Rolled& r) {
    if (!user_.Written(r.ticket)) return false;
    r.segment->sealed = true;
    return true;
  });
}

// Every record's location is known before it is appended, so that the index can learn
// them beside the appends: the segments a put fills (the user segment's room first, then
// new ones, created here) and how many records each takes.
Status SsdStoreImpl::PlanAppends(size_t n, uint32_t* locs, std::vector<PlannedRun>* plan) {
  const uint64_t per_segment = layout_.RecordsWithin(opts_.segment_bytes);
  SegmentPtr seg = user_.segment();
  uint64_t first = seg ? seg->records.load(std::memory_order_relaxed) : per_segment;
  for (size_t i = 0; i < n;) {
    if (first >= per_segment) {
      STRATA_RETURN_IF_ERROR(NewSegment(&seg));
      first = 0;
    }
    const size_t run = std::min<uint64_t>(n - i, per_segment - first);
    for (size_t j = 0; j < run; ++j) locs[i + j] = codec_.Make(seg->slot, first + j);
    plan->push_back(PlannedRun{seg, run, first});
    i += run;
    first += run;
  }
  return Status::OK();
}

Status SsdStoreImpl::AppendPlanned(const std::vector<PlannedRun>& plan, const uint64_t* keys, const uint8_t* rows) {
  size_t i = 0;
  for (const PlannedRun& run : plan) {
    if (run.segment != user_.segment()) STRATA_RETURN_IF_ERROR(RollUserSegment(run.segment));
    uint64_t first = 0;
    STRATA_RETURN_IF_ERROR(user_.AppendRun(keys + i, next_seq_, rows + i * opts_.row_bytes, run.records, &first));
    assert(first == run.first);  // the locations the index learned
    next_seq_ += run.records;
    i += run.records;
  }
  return Status::OK();
}

// Puts back the entries a failed put changed: its keys' locations name records that may
// never have been written.
void SsdStoreImpl::UndoUpserts(const uint64_t* keys, size_t n, const uint32_t* locs, const uint8_t* had,
                               const uint32_t* old) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t loc = 0;
    if (had[i]) {
      index_.ReplaceIf(keys[i], locs[i], old[i]);
    } else {
      index_.Erase(keys[i], &loc);
    }
  }
}

Status SsdStoreImpl::InStore(const uint64_t* keys, size_t n, uint8_t* in_store) {
  std::vector<uint8_t> scratch(n * opts_.row_bytes);
  return Get(keys, n, scratch.data(), in_store);
}

Status SsdStoreImpl::Put(const uint64_t* keys, size_t n, const uint8_t* rows) {
  std::vector<uint8_t> in_store(n);
  STRATA_RETURN_IF_ERROR(InStore(keys, n, in_store.data()));
  return PutKnown(keys, n, rows, in_store.data());
}

Status SsdStoreImpl::PutKnown(const uint64_t* keys, size_t n, const uint8_t* rows, const uint8_t* in_store) {
  STRATA_RETURN_IF_ERROR(error());
  std::vector<uint32_t> locs(n);
  std::vector<PlannedRun> plan;
  std::unique_lock append_lock(append_mu_);
  Status st = PlanAppends(n, locs.data(), &plan);
  if (!st.ok()) return KeepError(st);
  {
    std::vector<uint8_t> had(n);
    std::vector<uint32_t> old(n);
    // A Get looks locations up under index_mu_, so it sees the new ones only once the
    // records they name are appended too.
    std::unique_lock lk(index_mu_);
    index_.UpsertBatch(keys, n, in_store, locs.data(), had.data(), old.data(), &index_threads_,
                       [&] { st = AppendPlanned(plan, keys, rows); });
    if (!st.ok()) {
      UndoUpserts(keys, n, locs.data(), had.data(), old.data());
      return KeepError(st);
    }
    for (size_t i = 0; i < n; ++i) {
      if (had[i]) --slots_[codec_.Slot(old[i])]->live;
      ++slots_[codec_.Slot(locs[i])]->live;
    }
  }
  user_bytes_written_ += n * opts_.row_bytes;
  // A cache's sealed segments are compactable at once, and overwrites make them stale.
  if (!opts_.durable) {
    SealRolled();
    Schedule();
  }
  return Status::OK();
}

// A cache's records need no tombstone: its rows' durable copies live elsewhere, and it is
// never reopened with its contents. The erased records become stale for compaction.
Status SsdStoreImpl::Erase(const uint64_t* keys, size_t n) {
  STRATA_RETURN_IF_ERROR(error());
  if (opts_.durable) return Status::InvalidArgument(opts_.dir + ": a durable SSD-PS cannot erase rows");
  std::unique_lock lk(index_mu_);
  for (size_t i = 0; i < n; ++i) {
    uint32_t old = 0;
    index_.Erase(keys[i], &old);
    --slots_[codec_.Slot(old)]->live;
  }
  lk.unlock();
  Schedule();
  return Status::OK();
}

Status SsdStoreImpl::Sync() {
  STRATA_RETURN_IF_ERROR(error());
  if (!opts_.durable) return Status::OK();  // a cache makes nothing durable
  std::vector<SegmentPtr> promote = unsynced_;
  if (const SegmentPtr& cur = user_.segment()) {
    Status st = user_.Flush();
    if (!st.ok()) return KeepError(st);
    promote.push_back(cur);
  }
  bool changed = false;
  for (const SegmentPtr& seg : promote) {
    if (seg->records == seg->durable) continue;
    changed = true;
    Status st = SyncFile(seg->fd, seg->path);
    if (!st.ok()) return KeepError(st);
  }
  if (!changed) return Status::OK();
  {
    std::lock_guard lk(manifest_mu_);
    Status st = CommitManifest(promote, {});
    if (!st.ok()) return KeepError(st);
  }
  unsynced_.clear();
  ++sync_epoch_;
  Schedule();
  return Status::OK();
}

// Reads every segment in order and visits the records the index points at: sequential
// reads, and no compaction moves a record meanwhile.
Status SsdStoreImpl::Scan(const std::function<void(uint64_t key, const uint8_t* row)>& visit) {
  std::lock_guard compact(compact_mu_);
  if (user_.segment() != nullptr) {
    Status st = user_.Flush();  // so the open segment's records are on disk to read
    if (!st.ok()) return KeepError(st);
  }
  std::vector<SegmentPtr> segs;
  {
    std::shared_lock lk(index_mu_);
    for (const SegmentPtr& seg : slots_) {
      if (seg != nullptr) segs.push_back(seg);
    }
  }
  for (const SegmentPtr& seg : segs) STRATA_RETURN_IF_ERROR(ScanLive(*seg, visit));
  return Status::OK();
}

Status SsdStoreImpl::ScanLive(const Segment& seg, const std::function<void(uint64_t key, const uint8_t* row)>& visit) {
  return ScanSegment(seg, layout_, seg.records, [&](const RecordChunk& c) {
    std::vector<uint8_t> live(c.size());
    {
      std::shared_lock lk(index_mu_);
      for (size_t i = 0; i < c.size(); ++i) {
        uint32_t loc = 0;
        live[i] = index_.Find(c.keys[i], &loc) && loc == codec_.Make(seg.slot, c.first + i);
      }
    }
    for (size_t i = 0; i < c.size(); ++i) {
      if (live[i]) visit(c.keys[i], c.rows[i]);
    }
    return Status::OK();
  }, &bytes_read_);
}

uint64_t SsdStoreImpl::num_keys() const {
  std::shared_lock lk(index_mu_);
  return index_.size();
}

size_t SsdStoreImpl::num_segments() const {
  std::shared_lock lk(index_mu_);
  return static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), [](const SegmentPtr& s) { return s != nullptr; }));
}

StoreStats SsdStoreImpl::stats() const {
  StoreStats s;
  {
    std::shared_lock lk(index_mu_);
    s.live_keys = index_.size();
    s.index_bytes = index_.bytes();
    s.dram_bytes = s.index_bytes;
    size_t listed = 0;
    for (const SegmentPtr& seg : slots_) {
      if (seg == nullptr) continue;
      s.disk_bytes += layout_.ExtentBytes(seg->records);
      ++listed;
    }
    if (opts_.durable) s.disk_bytes += 36 + 16 * listed;  // the manifest
  }
  s.logical_bytes = s.live_keys * opts_.row_bytes;
  s.live_bytes = LiveBytes(s.live_keys);
  s.bytes_read = bytes_read_;
  s.bytes_written = bytes_written_;
  s.user_bytes_written = user_bytes_written_;
  s.compactions = compactions_;
  s.compaction_bytes = compaction_bytes_;
  return s;
}

}  // namespace strata::ssd

namespace strata {

Status OpenSsdStore(const SsdOptions& opts, std::unique_ptr<SsdStore>* out) {
  auto store = std::make_unique<ssd::SsdStoreImpl>(opts);
  STRATA_RETURN_IF_ERROR(store->Open());
  *out = std::move(store);
  return Status::OK();
}

Status OpenSsdStore(const SsdOptions& opts, std::unique_ptr<RowStore>* out) {
  std::unique_ptr<SsdStore> store;
  STRATA_RETURN_IF_ERROR(OpenSsdStore(opts, &store));
  *out = std::move(store);
  return Status::OK();
}

double SsdIndexPeakBytesPerKey(int threads) { return ssd::CompactIndex::PeakBytesPerKey(threads); }

}  // namespace strata
