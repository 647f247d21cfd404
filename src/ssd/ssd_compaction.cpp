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

constexpr size_t kCompactChunkBytes = 4 << 20;  // sequential read size of a victim
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
  struct Copy {
    uint64_t key, from, to;
  };
  std::vector<Copy> copies;
  std::vector<SegmentPtr> outputs;
  std::atomic<uint64_t> out_bytes{0};
  Appender out(layout_, opts_.write_buffer_bytes, &out_bytes);
  auto abandon = [&](const Status& st) {
    {
      std::unique_lock lk(index_mu_);
      DropSegments(outputs);
    }
    for (const SegmentPtr& seg : outputs) ::unlink(seg->path.c_str());
    bytes_written_ += out_bytes;
    return st;
  };
  uint64_t max_units = 1;
  for (const SegmentPtr& v : victims) max_units = std::max<uint64_t>(max_units, (v->records + layout_.per_unit - 1) / layout_.per_unit);
  const size_t chunk_units = static_cast<size_t>(
      std::min<uint64_t>(max_units, std::max<size_t>(1, kCompactChunkBytes / layout_.unit_bytes)));
  AlignedBuffer buf = NewAlignedBuffer(chunk_units * layout_.unit_bytes);
  std::vector<uint64_t> keys, seqs;
  std::vector<uint8_t> take;
  const uint64_t epoch = sync_epoch_;
  bool hold = false;  // some copy is superseded by a record the next Sync makes durable
  for (const SegmentPtr& v : victims) {
    const uint64_t records = v->records;
    const uint64_t units = (records + layout_.per_unit - 1) / layout_.per_unit;
    for (uint64_t u = 0; u < units; u += chunk_units) {
      if (shutting_down()) return abandon(Status::OK());
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_units, units - u));
      const uint64_t offset = kHeaderBytes + u * layout_.unit_bytes;
      size_t got = 0;
      Status st = PreadAll(v->fd, buf.get(), n * layout_.unit_bytes, offset, v->path, &got);
      if (st.ok() && got < n * layout_.unit_bytes) {
        st = Status::Corruption(v->path + ": truncated, short read at offset " + std::to_string(offset));
      }
      if (!st.ok()) return abandon(st);
      bytes_read_ += got;
      const uint64_t first = u * layout_.per_unit;
      const uint64_t end = std::min(records, (u + n) * layout_.per_unit);
      keys.resize(end - first);
      seqs.resize(end - first);
      take.assign(end - first, 0);
      for (uint64_t r = first; r < end; ++r) {
        if (!DecodeRecord(buf.get() + (layout_.Offset(r) - offset), opts_.row_bytes, &keys[r - first], &seqs[r - first])) {
          return abandon(Status::Corruption(v->path + ": record " + std::to_string(r) + " at offset " +
                                            std::to_string(layout_.Offset(r)) + ": checksum mismatch"));
        }
      }
      {
        std::shared_lock lk(index_mu_);
        for (uint64_t r = first; r < end; ++r) {
          uint64_t loc = 0;
          if (!index_.Find(keys[r - first], &loc)) continue;
          const Segment* at = slots_[LocationSlot(loc)].get();
          const bool live = loc == MakeLocation(v->slot, r);
          take[r - first] = live || LocationRecord(loc) >= at->durable;
          hold |= !live && take[r - first];
        }
      }
      for (uint64_t r = first; r < end; ++r) {
        if (!take[r - first]) continue;
        const SegmentPtr& cur = out.segment();
        if (cur == nullptr || layout_.ExtentBytes(cur->records + 1) > opts_.segment_bytes) {
          if (cur != nullptr) st = out.Flush();
          SegmentPtr seg;
          if (st.ok()) st = NewSegment(&seg);
          if (st.ok()) outputs.push_back(seg);
          if (st.ok()) st = out.Start(seg);
          if (!st.ok()) return abandon(st);
        }
        uint64_t rec = 0;
        st = out.Append(keys[r - first], seqs[r - first], buf.get() + (layout_.Offset(r) - offset) + 16, &rec);
        if (!st.ok()) return abandon(st);
        copies.push_back({keys[r - first], MakeLocation(v->slot, r), MakeLocation(out.segment()->slot, rec)});
      }
    }
  }
  if (!outputs.empty()) {
    Status st = out.Flush();
    for (const SegmentPtr& seg : outputs) {
      if (st.ok()) st = SyncFile(seg->fd, seg->path);
      seg->sealed = true;
      if (hold) seg->hold_until = epoch + 1;
    }
    if (!st.ok()) return abandon(st);
  }
  {
    std::lock_guard mlk(manifest_mu_);
    Status st = CommitManifest(outputs, victims);
    if (!st.ok()) return abandon(st);
    std::unique_lock lk(index_mu_);
    for (const Copy& c : copies) {
      if (index_.ReplaceIf(c.key, c.from, c.to)) ++slots_[LocationSlot(c.to)]->live;
    }
    DropSegments(victims);
  }
  // The switch is durable: the victims are garbage. A failed unlink only leaks the file
  // until the next open removes it as unlisted.
  for (const SegmentPtr& v : victims) ::unlink(v->path.c_str());
  bytes_written_ += out_bytes;
  compaction_bytes_ += out_bytes;
  ++compactions_;
  return Status::OK();
}

}  // namespace strata::ssd
