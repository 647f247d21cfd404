// SSD-PS background compaction, the disk bound, and the manifest commit compaction
// shares with Sync.
//
// A victim is a sealed segment whose stale fraction passes the threshold, or, while the
// estimated disk use is over the target (2 x live bytes + half a segment, or a lower
// disk_budget_bytes), any segment with stale records, best first. Targeting below
// DiskBound() (2 x live + one segment) lets the compactor run beside the writer so that
// WaitForDiskBound rarely waits. In durable mode a victim must also be fully durable, and
// its records are copied when the index still points at them or when it points at a newer
// record that is not durable yet: after a crash that newer record is gone, so the victim's
// copy must survive the switch. Copies keep their seq, so recovery picks the right one
// whatever the file order. Outputs are fdatasync'ed, the manifest swaps victims for
// outputs, then the index is moved with compare-and-set (a Put that raced the copy wins)
// and the victims are unlinked. An output holding copies of such not-yet-durably
// superseded records is held back from compaction until the next Sync, or the compactor
// would copy the same records round after round.
//
// In cache mode none of that durability work exists: every sealed segment is a candidate,
// only records the index points at are copied, nothing is synced and no manifest is
// written. Small fully live segments (the last output of each round) are candidates too
// while over the target, so partial outputs cannot pile up headers and padding; a round
// must shrink the disk, so the compactor always goes idle.
#include <unistd.h>

#include <algorithm>

#include "strata/common/thread_name.h"
#include "ssd/ssd_store_impl.h"

namespace strata::ssd {
namespace {

constexpr uint64_t kRoundSegments = 4;          // live bytes one round copies, in segments

}  // namespace

Status SsdStoreImpl::CommitManifest(const std::vector<SegmentPtr>& promote,
                                    const std::vector<SegmentPtr>& drop) {
  ManifestData m;
  m.row_bytes = static_cast<uint32_t>(opts_.row_bytes);
  m.next_file_number = next_file_;
  {
    std::shared_lock lk(index_mu_);
    for (const SegmentPtr& seg : slots_) {
      if (seg == nullptr || std::find(drop.begin(), drop.end(), seg) != drop.end()) continue;
      const bool up = std::find(promote.begin(), promote.end(), seg) != promote.end();
      const uint64_t count = up ? seg->records.load() : seg->durable.load();
      if (count > 0) m.segments.emplace_back(seg->number, count);
    }
  }
  std::sort(m.segments.begin(), m.segments.end());
  const std::string bytes = EncodeManifest(m);
  STRATA_RETURN_IF_ERROR(ReplaceFileAtomically(opts_.dir, kManifestName, kManifestTmpName, bytes));
  bytes_written_ += bytes.size();
  for (const SegmentPtr& seg : promote) seg->durable = seg->records.load();
  return Status::OK();
}

void SsdStoreImpl::Schedule() {
  std::lock_guard lk(mu_);
  if (!bg_thread_.joinable() || !bg_error_.ok()) return;
  bg_pending_ = true;
  bg_cv_.notify_one();
}

void SsdStoreImpl::BackgroundLoop() {
  NameThisThread("strata-compact");
  std::unique_lock lk(mu_);
  for (;;) {
    bg_cv_.wait(lk, [this] { return bg_pending_ || shutting_down_; });
    if (shutting_down_) break;
    bg_pending_ = false;
    bg_running_ = true;
    lk.unlock();
    {
      std::lock_guard clk(compact_mu_);
      Status st = CompactRounds();
      if (!st.ok()) KeepError(st);
    }
    lk.lock();
    bg_running_ = false;
    idle_cv_.notify_all();
  }
  bg_running_ = false;
  idle_cv_.notify_all();
}

Status SsdStoreImpl::CompactNow() {
  STRATA_RETURN_IF_ERROR(error());
  std::lock_guard clk(compact_mu_);
  Status st = CompactRounds();
  return st.ok() ? st : KeepError(st);
}

Status SsdStoreImpl::WaitForCompaction() {
  std::unique_lock lk(mu_);
  idle_cv_.wait(lk, [this] { return (!bg_pending_ && !bg_running_) || !bg_error_.ok() || shutting_down_; });
  return bg_error_;
}

Status SsdStoreImpl::WaitForDiskBound(StoreStats* stats) {
  *stats = this->stats();
  if (stats->disk_bytes <= DiskBound(*stats)) return error();
  if (bg_thread_.joinable()) {
    Schedule();
    STRATA_RETURN_IF_ERROR(WaitForCompaction());
  } else {
    STRATA_RETURN_IF_ERROR(CompactNow());
  }
  *stats = this->stats();
  return error();
}

uint64_t SsdStoreImpl::DiskBound(const StoreStats& stats) const {
  return 2 * stats.live_bytes + opts_.segment_bytes;
}

Status SsdStoreImpl::CompactRounds() {
  while (!shutting_down()) {
    std::vector<SegmentPtr> victims = PickVictims();
    if (victims.empty()) break;
    STRATA_RETURN_IF_ERROR(Rewrite(victims));
  }
  return Status::OK();
}

std::vector<SsdStoreImpl::Candidate> SsdStoreImpl::Candidates(uint64_t* disk, uint64_t* live_keys) {
  std::vector<Candidate> cands;
  std::shared_lock lk(index_mu_);
  *live_keys = index_.size();
  for (const SegmentPtr& seg : slots_) {
    if (seg == nullptr) continue;
    const uint64_t records = seg->records;
    const uint64_t extent = layout_.ExtentBytes(records);
    *disk += extent;
    if (!seg->sealed || records == 0) continue;
    if (opts_.durable && (seg->durable != records || seg->hold_until > sync_epoch_)) continue;
    // A fully live segment is worth rewriting only in a cache, and only when it is small
    // (a round's last output): merged with others it frees its header and padding.
    if (seg->live >= records && (opts_.durable || 2 * extent > opts_.segment_bytes)) continue;
    const uint64_t live_bytes = layout_.ExtentBytes(seg->live) - kHeaderBytes;
    const double stale = 1.0 - double(seg->live) / double(records);
    const double score = opts_.durable ? stale : 1.0 - double(live_bytes) / double(extent);
    cands.push_back({score, stale, extent, seg->live, live_bytes, seg});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return cands;
}

uint64_t SsdStoreImpl::CompactionTarget(uint64_t live_keys) const {
  const uint64_t target = 2 * LiveBytes(live_keys) + opts_.segment_bytes / 2;
  return opts_.disk_budget_bytes > 0 ? std::min(target, opts_.disk_budget_bytes) : target;
}

uint64_t SsdStoreImpl::OutputExtent(uint64_t records) const {
  const uint64_t per_segment = layout_.RecordsWithin(opts_.segment_bytes);
  const uint64_t full = records / per_segment, rest = records % per_segment;
  return full * layout_.ExtentBytes(per_segment) + (rest > 0 ? layout_.ExtentBytes(rest) : 0);
}

// Victims in order of score: every segment over the stale threshold, and more while the
// estimated disk use is over the target, up to a round's worth of copies. A cache round
// that would not shrink the disk (merging fully live segments that fit no tighter) is
// dropped, so rounds always make progress and the compactor goes idle.
std::vector<SsdStoreImpl::SegmentPtr> SsdStoreImpl::PickVictims() {
  uint64_t disk = 0, live_keys = 0;
  const std::vector<Candidate> cands = Candidates(&disk, &live_keys);
  const uint64_t target = CompactionTarget(live_keys);
  const uint64_t round_bytes = (opts_.durable ? kRoundSegments : 1) * opts_.segment_bytes;
  std::vector<SegmentPtr> victims;
  uint64_t copy_bytes = 0, live = 0, extent = 0;
  for (const Candidate& c : cands) {
    if (c.stale < opts_.compact_threshold && disk <= target) continue;
    if (!victims.empty() && copy_bytes + c.live_bytes > round_bytes) break;
    victims.push_back(c.seg);
    copy_bytes += c.live_bytes;
    live += c.live;
    extent += c.extent;
    disk -= std::min(disk, c.extent - c.live_bytes);
  }
  if (!opts_.durable && OutputExtent(live) >= extent) victims.clear();
  return victims;
}

Status SsdStoreImpl::Rewrite(const std::vector<SegmentPtr>& victims) {
  Round round(layout_, opts_.write_buffer_bytes, sync_epoch_);
  for (const SegmentPtr& v : victims) {
    bool stopped = false;
    Status st = ScanSegment(*v, layout_, v->records, [&](const RecordChunk& c) {
      stopped = shutting_down();
      return stopped ? Status::IOError(opts_.dir + ": compaction stopped, the store is closing") : CopyLive(*v, c, &round);
    }, &bytes_read_);
    if (!st.ok()) return AbandonRound(&round, stopped ? Status::OK() : st);
  }
  return FinishRound(victims, &round);
}

Status SsdStoreImpl::CopyLive(const Segment& v, const RecordChunk& c, Round* round) {
  std::vector<uint8_t> take(c.size(), 0);
  {
    std::shared_lock lk(index_mu_);
    for (size_t i = 0; i < c.size(); ++i) {
      uint32_t loc = 0;
      if (!index_.Find(c.keys[i], &loc)) continue;
      const Segment* at = slots_[codec_.Slot(loc)].get();
      const bool live = loc == codec_.Make(v.slot, c.first + i);
      // Durable mode also keeps a copy superseded by a record not yet durable: after a
      // crash that record is gone and this copy is the key's value.
      take[i] = live || (opts_.durable && codec_.Record(loc) >= at->durable);
      round->hold |= !live && take[i];
    }
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (take[i]) STRATA_RETURN_IF_ERROR(AppendCopy(c.keys[i], c.seqs[i], c.rows[i], codec_.Make(v.slot, c.first + i), round));
  }
  return Status::OK();
}

Status SsdStoreImpl::AppendCopy(uint64_t key, uint64_t seq, const uint8_t* row, uint32_t from, Round* round) {
  const SegmentPtr& cur = round->out.segment();
  if (cur == nullptr || cur->records >= layout_.RecordsWithin(opts_.segment_bytes)) {
    // No wait for the full output's writes: FinishRound's Flush waits for every one
    // before the index points at a copy.
    SegmentPtr seg;
    STRATA_RETURN_IF_ERROR(NewSegment(&seg));
    round->outputs.push_back(seg);
    STRATA_RETURN_IF_ERROR(round->out.Roll(seg));
  }
  uint64_t rec = 0;
  STRATA_RETURN_IF_ERROR(round->out.Append(key, seq, row, &rec));
  round->copies.push_back({key, from, codec_.Make(round->out.segment()->slot, rec)});
  return Status::OK();
}

Status SsdStoreImpl::FinishRound(const std::vector<SegmentPtr>& victims, Round* round) {
  Status st = round->outputs.empty() ? Status::OK() : round->out.Flush();
  for (const SegmentPtr& seg : round->outputs) {
    if (st.ok() && opts_.durable) st = SyncFile(seg->fd, seg->path);
    seg->sealed = true;
    if (round->hold) seg->hold_until = round->epoch + 1;
  }
  if (!st.ok()) return AbandonRound(round, st);
  {
    std::lock_guard mlk(manifest_mu_);
    if (opts_.durable) st = CommitManifest(round->outputs, victims);
    if (!st.ok()) return AbandonRound(round, st);
    std::unique_lock lk(index_mu_);
    for (const Round::Copy& c : round->copies) {
      if (index_.ReplaceIf(c.key, c.from, c.to)) ++slots_[codec_.Slot(c.to)]->live;
    }
    DropSegments(victims);
  }
  // The switch is done (and durable, in durable mode): the victims are garbage. Gets that
  // took them before the switch keep their fds open. A failed unlink only leaks the file
  // until the next open removes it as unlisted.
  for (const SegmentPtr& v : victims) ::unlink(v->path.c_str());
  bytes_written_ += round->out_bytes;
  compaction_bytes_ += round->out_bytes;
  ++compactions_;
  return Status::OK();
}

Status SsdStoreImpl::AbandonRound(Round* round, const Status& st) {
  {
    std::unique_lock lk(index_mu_);
    DropSegments(round->outputs);
  }
  for (const SegmentPtr& seg : round->outputs) ::unlink(seg->path.c_str());
  bytes_written_ += round->out_bytes;
  return st;
}

}  // namespace strata::ssd
