// SSD-PS background compaction and the manifest commit it shares with Sync.
//
// A victim is a sealed, fully durable segment whose stale fraction passes the threshold
// (or, while disk use is over budget, any segment with stale records, most stale first).
// Its records are copied when the index still points at them, or when the index points
// at a newer record that is not durable yet: after a crash that newer record is gone, so
// the victim's copy must survive the switch. Copies keep their seq, so recovery picks the
// right one whatever the file order. Outputs are fdatasync'ed, the manifest swaps victims
// for outputs, then the index is moved with compare-and-set (a Put that raced the copy
// wins) and the victims are unlinked. An output holding copies of such not-yet-durably
// superseded records is held back from compaction until the next Sync, or the compactor
// would copy the same records round after round.
#include <unistd.h>

#include <algorithm>

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

Status SsdStoreImpl::CompactRounds() {
  while (!shutting_down()) {
    std::vector<SegmentPtr> victims = PickVictims();
    if (victims.empty()) break;
    STRATA_RETURN_IF_ERROR(Rewrite(victims));
  }
  return Status::OK();
}

std::vector<SsdStoreImpl::SegmentPtr> SsdStoreImpl::PickVictims() {
  struct Candidate {
    double stale;
    uint64_t live_bytes;
    uint64_t reclaim;  // bytes freed by rewriting it
    SegmentPtr seg;
  };
  std::vector<Candidate> cands;
  uint64_t disk = 0;
  {
    std::shared_lock lk(index_mu_);
    for (const SegmentPtr& seg : slots_) {
      if (seg == nullptr) continue;
      const uint64_t records = seg->records;
      disk += layout_.ExtentBytes(records);
      if (!seg->sealed || records == 0 || seg->durable != records || seg->live >= records ||
          seg->hold_until > sync_epoch_) {
        continue;
      }
      const uint64_t live_bytes = layout_.ExtentBytes(seg->live) - kHeaderBytes;
      cands.push_back({1.0 - double(seg->live) / double(records), live_bytes,
                       layout_.ExtentBytes(records) - live_bytes, seg});
    }
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.stale > b.stale; });
  std::vector<SegmentPtr> victims;
  uint64_t copy_bytes = 0;
  for (const Candidate& c : cands) {
    const bool over_threshold = c.stale >= opts_.compact_threshold;
    const bool over_budget = opts_.disk_budget_bytes > 0 && disk > opts_.disk_budget_bytes;
    if (!over_threshold && !over_budget) break;
    if (!victims.empty() && copy_bytes + c.live_bytes > kRoundSegments * opts_.segment_bytes) break;
    victims.push_back(c.seg);
    copy_bytes += c.live_bytes;
    disk -= std::min(disk, c.reclaim);
  }
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
      uint64_t loc = 0;
      if (!index_.Find(c.keys[i], &loc)) continue;
      const Segment* at = slots_[LocationSlot(loc)].get();
      const bool live = loc == MakeLocation(v.slot, c.first + i);
      take[i] = live || LocationRecord(loc) >= at->durable;
      round->hold |= !live && take[i];
    }
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (take[i]) STRATA_RETURN_IF_ERROR(AppendCopy(c.keys[i], c.seqs[i], c.rows[i], MakeLocation(v.slot, c.first + i), round));
  }
  return Status::OK();
}

Status SsdStoreImpl::AppendCopy(uint64_t key, uint64_t seq, const uint8_t* row, uint64_t from, Round* round) {
  const SegmentPtr& cur = round->out.segment();
  if (cur == nullptr || layout_.ExtentBytes(cur->records + 1) > opts_.segment_bytes) {
    if (cur != nullptr) STRATA_RETURN_IF_ERROR(round->out.Flush());
    SegmentPtr seg;
    STRATA_RETURN_IF_ERROR(NewSegment(&seg));
    round->outputs.push_back(seg);
    STRATA_RETURN_IF_ERROR(round->out.Start(seg));
  }
  uint64_t rec = 0;
  STRATA_RETURN_IF_ERROR(round->out.Append(key, seq, row, &rec));
  round->copies.push_back({key, from, MakeLocation(round->out.segment()->slot, rec)});
  return Status::OK();
}

Status SsdStoreImpl::FinishRound(const std::vector<SegmentPtr>& victims, Round* round) {
  if (!round->outputs.empty()) {
    Status st = round->out.Flush();
    for (const SegmentPtr& seg : round->outputs) {
      if (st.ok()) st = SyncFile(seg->fd, seg->path);
      seg->sealed = true;
      if (round->hold) seg->hold_until = round->epoch + 1;
    }
    if (!st.ok()) return AbandonRound(round, st);
  }
  {
    std::lock_guard mlk(manifest_mu_);
    Status st = CommitManifest(round->outputs, victims);
    if (!st.ok()) return AbandonRound(round, st);
    std::unique_lock lk(index_mu_);
    for (const Round::Copy& c : round->copies) {
      if (index_.ReplaceIf(c.key, c.from, c.to)) ++slots_[LocationSlot(c.to)]->live;
    }
    DropSegments(victims);
  }
  // The switch is durable: the victims are garbage. A failed unlink only leaks the file
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
