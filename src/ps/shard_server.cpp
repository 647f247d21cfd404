// ShardServer: pulls, pins, write-backs and the in-flight set of one rank's stores.
#include "strata/ps/shard_server.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <iterator>
#include <mutex>
#include <vector>

#include "strata/common/row.h"
#include "strata/model/optimizer.h"

namespace strata {

ShardServer::ShardServer(const ModelSpec& model, std::unique_ptr<RowStore> store, MemPs* mem, SsdStore* ssd,
                         int threads)
    : model_(model), layout_(RowLayoutOf(model)), row_bytes_(layout_.bytes()), store_(std::move(store)), mem_(mem),
      ssd_(ssd), admission_(model.admit_min_count > 0
                     ? std::make_unique<Admission>(model.admit_min_count, model.evict_unseen_passes)
                     : nullptr),
      threads_(threads), buffers_(mem ? 1 : 2) {}

Status ShardServer::Announce(int pass, const uint64_t* keys, size_t n) {
  if (!mem_) return Status::OK();
  std::shared_lock lock(mu_);  // MemPs::Pin may run beside Get and Pin
  {
    std::lock_guard announced(announce_mu_);
    announced_.insert(pass);
  }
  mem_->Pin(keys, n, pass);
  return Status::OK();
}

// Before a pass's pull the write-back buffer is applied and the MEM-PS evicts down to its
// budget, here on the Pull stage's thread, so its writes to the SSD-PS overlap training
// instead of lengthening the pass. Over an SSD-PS (which lets Gets run beside a Put) the
// pins and the eviction hold the lock shared, the eviction beside the pull's reads from
// the SSD-PS (MemPs::EvictThenGet) and beside a Store, Release or announcement: every key
// those touch is pinned, so it takes none of their rows. Otherwise they hold it alone.
Status ShardServer::Pull(int pass, const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* held, uint8_t* fresh) {
  const bool evict_beside_reads = mem_ && ssd_ && ssd_->GetsBesidePuts();
  STRATA_RETURN_IF_ERROR(BeforeReadsAlone(pass, keys, n, !evict_beside_reads));
  if (n == 0) return Status::OK();
  std::shared_lock lock(mu_);
  if (evict_beside_reads) PinUnlessAnnounced(pass, keys, n);
  // The passes in flight before the reads: one released during them stored its rows first.
  const std::vector<std::shared_ptr<const Held>> earlier = InFlightBefore(pass);
  STRATA_RETURN_IF_ERROR(ReadRows(keys, n, rows, true, fresh, pass, evict_beside_reads));
  threads_.ForRanges(n, kKeysWorthAThread, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      held[i] = HeldBy(earlier, keys[i]) ? 1 : 0;
      if (fresh && held[i]) fresh[i] = 0;
    }
  });
  return Status::OK();
}

// With the lock held alone: applies the write-back buffer, and with evict (and a MEM-PS)
// pins the keys and evicts.
Status ShardServer::BeforeReadsAlone(int pass, const uint64_t* keys, size_t n, bool evict) {
  const bool pin_and_evict = mem_ && evict && n > 0;
  if (!pin_and_evict && !WriteBackPending()) return Status::OK();
  return Exclusive([&] {
    if (!pin_and_evict) return Status::OK();
    PinUnlessAnnounced(pass, keys, n);
    return mem_->Evict();
  });
}

// A pass announced before its pull was pinned then (Announce).
void ShardServer::PinUnlessAnnounced(int pass, const uint64_t* keys, size_t n) {
  {
    std::lock_guard a(announce_mu_);
    if (announced_.count(pass) > 0) return;
  }
  mem_->Pin(keys, n, pass);
}

void ShardServer::Admit(int pass, const uint64_t* keys, const uint32_t* examples, size_t n, uint8_t* admitted) {
  admission_->Admit(pass, keys, examples, n, admitted);
}

AdmissionTotals ShardServer::AdmissionThrough(int through) const {
  return admission_ ? admission_->TotalsThrough(through) : AdmissionTotals();
}

void ShardServer::PendingThrough(int through, std::vector<uint64_t>* keys, std::vector<uint8_t>* counts,
                                 std::vector<uint32_t>* last) const {
  keys->clear();
  counts->clear();
  last->clear();
  if (admission_) admission_->Snapshot(through, keys, counts, last);
}

void ShardServer::LoadPending(const uint64_t* keys, const uint8_t* counts, const uint32_t* last, size_t n) {
  admission_->Load(keys, counts, last, n);
}

Status ShardServer::FlushWriteBack() {
  return WriteBackPending() ? Exclusive([] { return Status::OK(); }) : Status::OK();
}

Status ShardServer::PullReadOnly(const uint64_t* keys, size_t n, uint8_t* rows) {
  if (n == 0) return Status::OK();
  STRATA_RETURN_IF_ERROR(FlushWriteBack());
  std::shared_lock lock(mu_);
  return ReadRows(keys, n, rows, admission_ == nullptr, nullptr, released_through_ + 1);
}

bool ShardServer::Dead(const uint8_t* row, int now) const {
  const int64_t unseen = model_.evict_unseen_passes;
  return unseen > 0 && static_cast<int64_t>(layout_.LastPass(row)) + unseen <= now - 1;
}

Status ShardServer::ReadRows(const uint64_t* keys, size_t n, uint8_t* rows, bool created, uint8_t* fresh, int now,
                             bool evict_first) {
  std::vector<uint8_t> found(n);
  STRATA_RETURN_IF_ERROR(evict_first ? mem_->EvictThenGet(keys, n, rows, found.data())
                                     : store_->Get(keys, n, rows, found.data()));
  threads_.ForRanges(n, kKeysWorthAThread, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (found[i] && Dead(rows + i * row_bytes_, now)) found[i] = 0;
      if (fresh) fresh[i] = !found[i];
      if (found[i]) continue;
      if (created) {
        InitRow(model_, keys[i], rows + i * row_bytes_);
      } else {
        std::fill_n(rows + i * row_bytes_, row_bytes_, uint8_t{0});
      }
    }
  });
  return Status::OK();
}

std::vector<std::shared_ptr<const ShardServer::Held>> ShardServer::InFlightBefore(int pass) {
  std::vector<std::shared_ptr<const Held>> earlier;
  std::lock_guard lock(in_flight_mu_);
  for (const auto& [p, held] : in_flight_) {
    if (p >= pass) break;
    earlier.push_back(held);
  }
  return earlier;
}

bool ShardServer::HeldBy(const std::vector<std::shared_ptr<const Held>>& passes, uint64_t key) {
  for (const auto& held : passes) {
    const uint32_t id = held->owned->Find(key);
    if (id != KeyIndex::kNone && (held->pending.empty() || !held->pending[id])) return true;
  }
  return false;
}

void ShardServer::Hold(int pass, std::shared_ptr<const KeyIndex> owned, std::vector<uint8_t> pending) {
  auto held = std::make_shared<const Held>(Held{std::move(owned), std::move(pending)});
  std::lock_guard lock(in_flight_mu_);
  in_flight_[pass] = std::move(held);
}

Status ShardServer::Store(const uint64_t* keys, size_t n, const uint8_t* rows) {
  if (n == 0) return Status::OK();
  if (mem_) {
    bool put = false;
    {
      std::shared_lock lock(mu_);
      std::lock_guard store(store_mu_);
      STRATA_RETURN_IF_ERROR(mem_->PutIfRoom(keys, n, rows, &put));
      if (put) LogChangedKeys(keys, n);
    }
    return put ? Status::OK() : Exclusive([&] { return PutReturned(keys, n, rows); });
  }
  std::string copy = TakeBuffer(n * row_bytes_);
  std::memcpy(copy.data(), rows, n * row_bytes_);
  return Store(std::vector<uint64_t>(keys, keys + n), std::move(copy));
}

Status ShardServer::Store(std::vector<uint64_t> keys, std::string rows) {
  assert(rows.size() == keys.size() * row_bytes_);
  if (mem_) {
    const Status st = Store(keys.data(), keys.size(), reinterpret_cast<const uint8_t*>(rows.data()));
    KeepBuffer(std::move(rows));
    return st;
  }
  if (keys.empty()) {
    KeepBuffer(std::move(rows));
    return Status::OK();
  }
  WriteBack wb;
  wb.keys = std::move(keys);
  wb.rows = std::move(rows);
  std::lock_guard lock(write_back_mu_);
  write_back_.push_back(std::move(wb));
  return Status::OK();
}

// With a MEM-PS and nothing to erase, a release is applied at once, beside any pull in
// progress (it unpins the pass, so the next eviction may take its rows); else buffered.
Status ShardServer::Release(int pass) {
  if (mem_ && model_.evict_unseen_passes == 0) {
    std::shared_lock lock(mu_);
    std::lock_guard store(store_mu_);
    return ReleaseNow(pass);
  }
  WriteBack wb;
  wb.released = pass;
  std::lock_guard lock(write_back_mu_);
  write_back_.push_back(std::move(wb));
  return Status::OK();
}

bool ShardServer::WriteBackPending() {
  std::lock_guard lock(write_back_mu_);
  return !write_back_.empty();
}

Status ShardServer::ApplyWriteBack() {
  std::vector<WriteBack> pending;
  {
    std::lock_guard lock(write_back_mu_);
    std::swap(pending, write_back_);
  }
  for (WriteBack& wb : pending) {
    if (wb.released >= 0) {
      STRATA_RETURN_IF_ERROR(ReleaseNow(wb.released));
      continue;
    }
    STRATA_RETURN_IF_ERROR(
        PutReturned(wb.keys.data(), wb.keys.size(), reinterpret_cast<const uint8_t*>(wb.rows.data())));
    KeepBuffer(std::move(wb.rows));  // for the pull that applies it, or the next push-back
  }
  return Status::OK();
}

// The MEM-PS moves to the next pass here, not when that pass starts training: the next
// pass's pull may be reading the store then, and training would wait for it.
Status ShardServer::ReleaseNow(int pass) {
  {
    std::lock_guard lock(in_flight_mu_);
    in_flight_.erase(pass);
  }
  if (admission_) admission_->Release(pass);
  released_through_ = std::max(released_through_.load(), pass);
  if (model_.evict_unseen_passes > 0) STRATA_RETURN_IF_ERROR(EvictDead(pass));
  {
    std::lock_guard a(announce_mu_);
    announced_.erase(pass);
  }
  if (!mem_) return Status::OK();
  STRATA_RETURN_IF_ERROR(mem_->UnpinPass(pass));
  return mem_->BeginPass(pass + 1);
}

// One scan of the stack: at the end of `pass`, a row is dead when its last pass is at most
// pass - N. Rows dead earlier were erased at their own pass (or left out of the checkpoint
// a resume loaded), so every row found here died at `pass`.
Status ShardServer::EvictDead(int pass) {
  std::vector<uint64_t> dead;
  STRATA_RETURN_IF_ERROR(store_->Scan([&](uint64_t key, const uint8_t* row) {
    if (Dead(row, pass + 1)) dead.push_back(key);
  }));
  evicted_[pass] = static_cast<int64_t>(dead.size());
  while (evicted_.size() > 64) evicted_.erase(evicted_.begin());  // the reporter asks for recent passes
  if (dead.empty()) return Status::OK();
  STRATA_RETURN_IF_ERROR(store_->Erase(dead.data(), dead.size()));
  ForgetChangedKeys(dead);
  if (log_erased_) erased_[pass] = std::move(dead);
  return Status::OK();
}

// The log is deduplicated whenever it doubles, so it holds at most twice the keys changed.
Status ShardServer::PutReturned(const uint64_t* keys, size_t n, const uint8_t* rows) {
  STRATA_RETURN_IF_ERROR(store_->Put(keys, n, rows));
  LogChangedKeys(keys, n);
  return Status::OK();
}

void ShardServer::LogChangedKeys(const uint64_t* keys, size_t n) {
  if (!log_changed_) return;
  changed_.insert(changed_.end(), keys, keys + n);
  if (changed_.size() > 2 * changed_distinct_ + 4096) {
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
    changed_distinct_ = changed_.size();
  }
}

// One pass over the sorted log at each erasure (at most one a pass), so the log holds only
// keys the store has and an increment knows its row count before it reads a row.
void ShardServer::ForgetChangedKeys(std::vector<uint64_t> erased) {
  if (!log_changed_ || changed_.empty() || erased.empty()) return;
  std::sort(changed_.begin(), changed_.end());
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  std::sort(erased.begin(), erased.end());
  std::vector<uint64_t> kept;
  kept.reserve(changed_.size());
  std::set_difference(changed_.begin(), changed_.end(), erased.begin(), erased.end(), std::back_inserter(kept));
  changed_.swap(kept);
  changed_distinct_ = changed_.size();
}

void ShardServer::LogChanged(bool on) {
  std::lock_guard lock(mu_);
  log_changed_ = on;
}

Status ShardServer::WithChanged(const std::function<Status(RowStore&, const std::vector<uint64_t>&)>& fn) {
  return Exclusive([&] {
    std::vector<uint64_t> keys;
    keys.swap(changed_);
    changed_distinct_ = 0;
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return fn(*store_, keys);
  });
}

void ShardServer::LogErased(bool on) {
  std::lock_guard lock(mu_);
  log_erased_ = on;
}

Status ShardServer::ErasedSince(int first, std::vector<uint64_t>* keys) {
  return Exclusive([&] {
    keys->clear();
    for (auto it = erased_.lower_bound(first); it != erased_.end(); ++it) {
      keys->insert(keys->end(), it->second.begin(), it->second.end());
    }
    std::sort(keys->begin(), keys->end());  // a key may die, return and die again
    keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
    return Status::OK();
  });
}

void ShardServer::ForgetErasedBefore(int first) {
  std::lock_guard lock(mu_);
  erased_.erase(erased_.begin(), erased_.lower_bound(first));
}

Status ShardServer::EraseStored(const uint64_t* keys, size_t n) {
  return Exclusive([&] {
    std::vector<uint8_t> rows(n * row_bytes_), found(n);
    STRATA_RETURN_IF_ERROR(store_->Get(keys, n, rows.data(), found.data()));
    std::vector<uint64_t> present;
    for (size_t i = 0; i < n; ++i) {
      if (found[i]) present.push_back(keys[i]);
    }
    if (present.empty()) return Status::OK();
    STRATA_RETURN_IF_ERROR(store_->Erase(present.data(), present.size()));
    ForgetChangedKeys(std::move(present));
    return Status::OK();
  });
}

Status ShardServer::EvictedAt(int pass, int64_t* rows) {
  return Exclusive([&] {
    auto it = evicted_.find(pass);
    *rows = it == evicted_.end() ? 0 : it->second;
    return Status::OK();
  });
}

Status ShardServer::Exclusive(const std::function<Status()>& fn) {
  std::lock_guard lock(mu_);
  STRATA_RETURN_IF_ERROR(ApplyWriteBack());
  return fn();
}

Status ShardServer::Load(const uint64_t* keys, size_t n, const uint8_t* rows) {
  return Exclusive([&] {
    STRATA_RETURN_IF_ERROR(store_->Put(keys, n, rows));
    return mem_ ? mem_->Evict() : Status::OK();
  });
}

Status ShardServer::WithStore(const std::function<Status(RowStore&)>& fn) {
  return Exclusive([&] { return fn(*store_); });
}

Status ShardServer::Counters(TierCounters* out) {
  TierCounters& c = *out;
  c = TierCounters();
  c[TierCounters::kAdmissionBytes] = admission_ ? static_cast<int64_t>(admission_->bytes()) : 0;
  if (!mem_) {
    std::shared_lock lock(mu_);
    const StoreStats d = store_->stats();
    c[TierCounters::kDramRows] = static_cast<int64_t>(d.live_keys);
    c[TierCounters::kDramBytes] = static_cast<int64_t>(d.dram_bytes);
    return Status::OK();
  }
  StoreStats d;
  if (ssd_) STRATA_RETURN_IF_ERROR(ssd_->WaitForDiskBound(&d));  // not under mu_: it may wait
  std::shared_lock lock(mu_);
  if (!ssd_) d = store_->stats();
  const MemPsStats m = mem_->mem_stats();
  c[TierCounters::kCacheHits] = static_cast<int64_t>(m.hits);
  c[TierCounters::kCacheMisses] = static_cast<int64_t>(m.misses);
  c[TierCounters::kSsdRowsRead] = static_cast<int64_t>(m.backing_rows_read);
  c[TierCounters::kSsdRowsWritten] = static_cast<int64_t>(m.rows_flushed);
  c[TierCounters::kSsdBytesRead] = static_cast<int64_t>(d.bytes_read);
  c[TierCounters::kSsdBytesWritten] = static_cast<int64_t>(d.bytes_written);
  c[TierCounters::kSsdDiskBytes] = static_cast<int64_t>(d.disk_bytes);
  c[TierCounters::kCompactions] = static_cast<int64_t>(d.compactions);
  c[TierCounters::kSsdLiveBytes] = static_cast<int64_t>(d.live_bytes);
  c[TierCounters::kSsdIndexBytes] = static_cast<int64_t>(d.index_bytes);
  c[TierCounters::kDramRows] = static_cast<int64_t>(m.resident_rows);
  c[TierCounters::kDramBytes] = static_cast<int64_t>(m.resident_bytes);
  return Status::OK();
}

Status ShardServer::NumKeys(uint64_t* out) {
  return Exclusive([&] {
    *out = store_->num_keys();
    return Status::OK();
  });
}

}  // namespace strata
