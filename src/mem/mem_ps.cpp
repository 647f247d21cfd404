// MEM-PS (strata/mem/mem_ps.h): lock-striped DRAM row cache over a backing RowStore. Each
// stripe owns a CachePolicy (which doubles as its key index), a RowArena whose slots are
// the policy's handles, per-slot flags, the pins declared for rows not cached yet, and a Bloom filter of the keys
// it has written to the backing store.
#include "strata/mem/mem_ps.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "strata/mem/bloom_filter.h"
#include "strata/common/row_arena.h"
#include "strata/common/partition.h"
#include "strata/mem/cache_policy.h"

namespace strata {
namespace {

using Handle = CachePolicy::Handle;

constexpr uint8_t kDirty = 1;      // newer than the backing store's copy
constexpr uint8_t kInBacking = 2;  // the backing store holds some version of the key
// Keys a stripe's filter is first sized for: at least its capacity (the keys it writes
// come in that order of magnitude), so the chain of doubling filters stays short.
constexpr size_t kBloomInitialKeys = 1 << 14;

struct Stripe {
  Stripe(size_t row_bytes, size_t capacity, int bloom_bits)
      : capacity_rows(capacity),
        arena(row_bytes, std::max<size_t>(capacity, 1)),
        bloom(std::max(kBloomInitialKeys, capacity), bloom_bits) {
    policy.Reserve(capacity);
  }

  const size_t capacity_rows;
  std::mutex mu;
  // protected by mu
  CachePolicy policy;  // key -> handle (the row's arena slot), eviction order, pins
  RowArena arena;
  std::vector<uint8_t> flags;  // per handle: kDirty | kInBacking
  BloomFilter bloom;
  uint64_t dirty = 0;
  uint64_t hits = 0, misses = 0, bloom_skips = 0, backing_lookups = 0, backing_rows_read = 0;
  uint64_t evictions = 0, dirty_evictions = 0;
  size_t inserted = 0;  // rows inserted since the last eviction
};

// Rows on their way to the backing store, with whether it holds a version of each (the
// kInBacking flag, which lets the SSD-PS update its index without a read).
struct FlushBatch {
  std::vector<uint64_t> keys;
  std::vector<uint8_t> rows;
  std::vector<uint8_t> in_backing;
  void Add(uint64_t key, const uint8_t* row, size_t row_bytes, uint8_t flags) {
    keys.push_back(key);
    rows.insert(rows.end(), row, row + row_bytes);
    in_backing.push_back((flags & kInBacking) ? 1 : 0);
  }
  void Clear() {
    keys.clear();
    rows.clear();
    in_backing.clear();
  }
};

class MemPsImpl final : public MemPs {
 public:
  MemPsImpl(const MemPsOptions& o, std::unique_ptr<RowStore> backing)
      : options_(o),
        backing_(std::move(backing)),
        row_bytes_(backing_->row_bytes()),
        capacity_rows_(o.capacity_bytes / (row_bytes_ + kMemPsRowOverheadBytes)),
        bloom_enabled_(backing_->num_keys() == 0) {
    const size_t n = static_cast<size_t>(o.stripes);
    for (size_t i = 0; i < n; ++i) {
      const size_t cap = WholeChunks(capacity_rows_ / n + (i < capacity_rows_ % n ? 1 : 0));
      stripes_.push_back(std::make_unique<Stripe>(row_bytes_, cap, o.bloom_bits_per_key));
    }
  }

  size_t row_bytes() const override { return row_bytes_; }

  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    std::vector<size_t> missing;  // indices into keys that the backing store may hold
    ForEachByStripe(keys, n, [&](Stripe& s, size_t i) {
      found[i] = CopyCached(s, keys[i], rows + i * row_bytes_);
      if (found[i]) {
        ++s.hits;
        return;
      }
      ++s.misses;
      if (bloom_enabled_ && !s.bloom.MayContain(keys[i])) {
        ++s.bloom_skips;
        return;
      }
      missing.push_back(i);
    });
    if (missing.empty()) return Status::OK();

    std::vector<uint64_t> keys_in;
    std::vector<uint8_t> rows_in, found_in;
    STRATA_RETURN_IF_ERROR(ReadBacking(keys, missing, &keys_in, &rows_in, &found_in));
    ForEachByStripe(keys_in.data(), keys_in.size(), [&](Stripe& s, size_t j) {
      const size_t i = missing[j];
      ++s.backing_lookups;
      // A concurrent Get may have cached the key meanwhile: same clean row, keep that one.
      found[i] = CopyCached(s, keys[i], rows + i * row_bytes_);
      if (found[i] || !found_in[j]) return;
      ++s.backing_rows_read;
      InsertRow(s, keys[i], &rows_in[j * row_bytes_], kInBacking);
      std::memcpy(rows + i * row_bytes_, &rows_in[j * row_bytes_], row_bytes_);
      found[i] = 1;
    });
    return Status::OK();
  }

  // With deferred eviction, first makes room in the stripes the new keys would take over
  // their budget.
  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    const StripeGroups groups = GroupByStripe(keys, n);
    if (!options_.evict_in_calls) STRATA_RETURN_IF_ERROR(MakeRoom(keys, groups));
    STRATA_RETURN_IF_ERROR(PutGroups(keys, groups, rows));
    return options_.evict_in_calls ? Trim(Target::kBudget) : Status::OK();
  }

  Status PutIfRoom(const uint64_t* keys, size_t n, const uint8_t* rows, bool* put) override {
    const StripeGroups groups = GroupByStripe(keys, n);
    *put = false;
    for (size_t j = 0; j < stripes_.size(); ++j) {
      Stripe& s = *stripes_[j];
      std::lock_guard lock(s.mu);
      if (!RoomIn(s, keys, groups, j)) return Status::OK();
    }
    *put = true;
    return PutGroups(keys, groups, rows);
  }

  // Cached rows leave the cache; the backing store erases the keys it holds (a key not
  // cached is there, as every key is present).
  Status Erase(const uint64_t* keys, size_t n) override {
    std::vector<uint64_t> backed;
    for (size_t i = 0; i < n; ++i) {
      Stripe& s = StripeOf(keys[i]);
      std::lock_guard lock(s.mu);
      const Handle h = s.policy.Find(keys[i]);
      if (h == CachePolicy::kNone || (s.flags[h] & kInBacking)) backed.push_back(keys[i]);
      if (h == CachePolicy::kNone) continue;
      if (s.flags[h] & kDirty) --s.dirty;
      s.flags[h] = 0;
      s.policy.Erase(h);
    }
    return backed.empty() ? Status::OK() : backing_->Erase(backed.data(), backed.size());
  }

  Status Sync() override { return Flush(); }

  Status Scan(const std::function<void(uint64_t, const uint8_t*)>& visit) override {
    for (auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      sp->policy.ForEach([&](uint64_t key, uint32_t slot) { visit(key, sp->arena.row(slot)); });
    }
    return backing_->Scan([&](uint64_t key, const uint8_t* row) {
      Stripe& s = StripeOf(key);
      std::lock_guard lock(s.mu);
      if (s.policy.Find(key) == CachePolicy::kNone) visit(key, row);
    });
  }

  uint64_t num_keys() const override {
    uint64_t n = backing_->num_keys();
    for (const auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      sp->policy.ForEach([&](uint64_t, uint32_t slot) { n += !(sp->flags[slot] & kInBacking); });
    }
    return n;
  }

  StoreStats stats() const override {
    StoreStats s = backing_->stats();
    s.live_keys = num_keys();
    s.logical_bytes = s.live_keys * row_bytes_;
    const MemPsStats m = mem_stats();
    s.dram_bytes += m.resident_bytes + m.bloom_bytes;
    return s;
  }

  Status BeginPass(int pass) override {
    for (auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      sp->policy.BeginPass(pass);
    }
    return options_.evict_in_calls ? Trim(Target::kBudget) : Status::OK();
  }

  void Pin(const uint64_t* keys, size_t n, int pass) override {
    ForEachByStripe<kIndexOnly>(keys, n, [&](Stripe& s, size_t i) { s.policy.PinKey(keys[i], pass); });
  }

  Status UnpinPass(int pass) override {
    for (auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      sp->policy.UnpinPass(pass);
    }
    return options_.evict_in_calls ? Trim(Target::kBudget) : Status::OK();
  }

  Status Evict() override { return Trim(options_.evict_in_calls ? Target::kBudget : Target::kRoomForInserts); }

  Status Flush() override {
    FlushBatch batch;
    for (auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      sp->policy.ForEach([&](uint64_t key, uint32_t slot) {
        if (sp->flags[slot] & kDirty) batch.Add(key, sp->arena.row(slot), row_bytes_, sp->flags[slot]);
      });
    }
    // Rows are marked clean only once written, so a failed write leaves them dirty.
    for (size_t begin = 0; begin < batch.keys.size(); begin += options_.flush_batch_rows) {
      const size_t n = std::min(options_.flush_batch_rows, batch.keys.size() - begin);
      STRATA_RETURN_IF_ERROR(backing_->PutKnown(&batch.keys[begin], n, &batch.rows[begin * row_bytes_], &batch.in_backing[begin]));
      for (size_t i = begin; i < begin + n; ++i) {
        Stripe& s = StripeOf(batch.keys[i]);
        std::lock_guard lock(s.mu);
        s.flags[s.policy.Find(batch.keys[i])] = kInBacking;
        --s.dirty;
      }
      Written(batch.keys.data() + begin, n);
    }
    return backing_->Sync();
  }

  MemPsStats mem_stats() const override {
    MemPsStats st;
    for (const auto& sp : stripes_) {
      std::lock_guard lock(sp->mu);
      st.hits += sp->hits;
      st.misses += sp->misses;
      st.bloom_skips += sp->bloom_skips;
      st.backing_lookups += sp->backing_lookups;
      st.backing_rows_read += sp->backing_rows_read;
      st.evictions += sp->evictions;
      st.dirty_evictions += sp->dirty_evictions;
      st.resident_rows += sp->policy.size();
      st.pinned_rows += sp->policy.pinned_rows();
      st.dirty_rows += sp->dirty;
      st.bloom_bytes += sp->bloom.memory_bytes();
      st.resident_bytes += sp->arena.memory_bytes() + sp->policy.bytes() + sp->flags.capacity();
    }
    st.rows_flushed = rows_flushed_;
    st.bytes_flushed = rows_flushed_ * row_bytes_;
    st.flush_batches = flush_batches_;
    st.capacity_rows = capacity_rows_;
    return st;
  }

 private:
  // A stripe's capacity in rows, rounded down to whole arena chunks when it spans more than
  // one: a last chunk a few rows full would cost a whole 2 MiB huge page.
  size_t WholeChunks(size_t rows) const {
    const size_t chunk = RowArena::RowsPerChunk(row_bytes_, rows);
    return rows > chunk ? rows / chunk * chunk : rows;
  }

  size_t StripeIndex(uint64_t key) const {
    // Salted so the split is independent of OwnerRank (a rank's keys share Mix64 % ranks).
    return Mix64(key ^ 0x2545f4914f6cdd1dULL) % stripes_.size();
  }
  Stripe& StripeOf(uint64_t key) const { return *stripes_[StripeIndex(key)]; }

  // Indices of keys grouped by stripe: order[begin[j] .. begin[j + 1]) are stripe j's, in
  // their order among keys.
  struct StripeGroups {
    std::vector<uint32_t> order;
    std::vector<uint32_t> begin;
  };
  StripeGroups GroupByStripe(const uint64_t* keys, size_t n) const {
    assert(n <= UINT32_MAX);
    StripeGroups g;
    g.begin.assign(stripes_.size() + 1, 0);
    std::vector<uint32_t> stripe_of(n);
    for (size_t i = 0; i < n; ++i) {
      stripe_of[i] = static_cast<uint32_t>(StripeIndex(keys[i]));
      ++g.begin[stripe_of[i] + 1];
    }
    for (size_t j = 0; j < stripes_.size(); ++j) g.begin[j + 1] += g.begin[j];
    g.order.resize(n);
    std::vector<uint32_t> at(g.begin.begin(), g.begin.end() - 1);
    for (size_t i = 0; i < n; ++i) g.order[at[stripe_of[i]]++] = static_cast<uint32_t>(i);
    return g;
  }

  // Calls visit(stripe, i) for each i < n with the stripe of keys[i] locked, stripe by
  // stripe: one lock a stripe, and each stripe's index and filter stay in the CPU's cache
  // while its keys are handled.
  // The index slots and filter blocks of the key kPrefetchAhead places on are loaded while
  // a key is handled, so the loop waits for about one cache miss a key, not several. A
  // visit that never asks the filter (kIndexOnly) loads only the index.
  static constexpr uint32_t kPrefetchAhead = 8;
  static constexpr bool kIndexOnly = false;
  template <bool kWithFilter = true, typename Visit>
  void ForEachByStripe(const uint64_t* keys, size_t n, const Visit& visit) const {
    ForEachInGroups<kWithFilter>(GroupByStripe(keys, n), keys, visit);
  }
  template <bool kWithFilter = true, typename Visit>
  void ForEachInGroups(const StripeGroups& g, const uint64_t* keys, const Visit& visit) const {
    for (size_t j = 0; j < stripes_.size(); ++j) {
      const uint32_t begin = g.begin[j], end = g.begin[j + 1];
      if (begin == end) continue;
      Stripe& s = *stripes_[j];
      std::lock_guard lock(s.mu);
      for (uint32_t k = begin; k < std::min(end, begin + kPrefetchAhead); ++k) Prefetch<kWithFilter>(s, keys[g.order[k]]);
      for (uint32_t k = begin; k < end; ++k) {
        if (k + kPrefetchAhead < end) Prefetch<kWithFilter>(s, keys[g.order[k + kPrefetchAhead]]);
        visit(s, g.order[k]);
      }
    }
  }
  template <bool kWithFilter>
  void Prefetch(const Stripe& s, uint64_t key) const {
    s.policy.Prefetch(key);
    if (kWithFilter && bloom_enabled_) s.bloom.Prefetch(key);
  }

  uint64_t Frequency(const Stripe& s, Handle h, const uint8_t* row) const {
    if (options_.freq_offset < 0) return s.policy.PassCount(h);
    uint32_t f;
    std::memcpy(&f, row + options_.freq_offset, sizeof(f));
    return f;
  }

  // Each stripe's keys under one hold of its lock: a cached row is overwritten, a key the
  // backing store cannot hold (its filter says so) is inserted, and the rest are looked up
  // there first. Evicts nothing and writes nothing to the backing store.
  Status PutGroups(const uint64_t* keys, const StripeGroups& groups, const uint8_t* rows) {
    std::vector<size_t> probe;  // uncached keys the backing store may already hold
    ForEachInGroups(groups, keys, [&](Stripe& s, size_t i) {
      if (OverwriteCached(s, keys[i], rows + i * row_bytes_)) return;
      if (bloom_enabled_ && !s.bloom.MayContain(keys[i])) {
        InsertRow(s, keys[i], rows + i * row_bytes_, kDirty);
      } else {
        probe.push_back(i);
      }
    });
    if (!probe.empty()) {
      // Only to keep num_keys() exact: is the key new to the store as a whole?
      std::vector<uint64_t> keys_in;
      std::vector<uint8_t> scratch, found_in;
      STRATA_RETURN_IF_ERROR(ReadBacking(keys, probe, &keys_in, &scratch, &found_in));
      ForEachByStripe(keys_in.data(), keys_in.size(), [&](Stripe& s, size_t j) {
        const uint8_t* row = rows + probe[j] * row_bytes_;
        ++s.backing_lookups;
        s.backing_rows_read += found_in[j];
        // A concurrent Get may have loaded the key's older row meanwhile.
        if (!OverwriteCached(s, keys_in[j], row)) InsertRow(s, keys_in[j], row, kDirty | (found_in[j] ? kInBacking : 0));
      });
    }
    return Status::OK();
  }

  // Reads keys[which[j]] from the backing store into (*keys_in)[j], (*rows_in)[j] and
  // (*found_in)[j] (no stripe lock held: it may block on the disk).
  Status ReadBacking(const uint64_t* keys, const std::vector<size_t>& which, std::vector<uint64_t>* keys_in,
                     std::vector<uint8_t>* rows_in, std::vector<uint8_t>* found_in) {
    keys_in->resize(which.size());
    for (size_t j = 0; j < which.size(); ++j) (*keys_in)[j] = keys[which[j]];
    rows_in->resize(which.size() * row_bytes_);
    found_in->assign(which.size(), 0);
    return backing_->Get(keys_in->data(), keys_in->size(), rows_in->data(), found_in->data());
  }

  // REQUIRES: s.mu held. Copies the cached row of key to out and touches it; false if absent.
  bool CopyCached(Stripe& s, uint64_t key, uint8_t* out) {
    Handle h = s.policy.Find(key);
    if (h == CachePolicy::kNone) return false;
    const uint8_t* row = s.arena.row(h);
    std::memcpy(out, row, row_bytes_);
    s.policy.Touch(h, Frequency(s, h, row));
    return true;
  }

  // REQUIRES: s.mu held. Replaces the cached row of key by row, now dirty; false if absent.
  bool OverwriteCached(Stripe& s, uint64_t key, const uint8_t* row) {
    const Handle h = s.policy.Find(key);
    if (h == CachePolicy::kNone) return false;
    std::memcpy(s.arena.row(h), row, row_bytes_);
    if (!(s.flags[h] & kDirty)) ++s.dirty;
    s.flags[h] |= kDirty;
    s.policy.Touch(h, Frequency(s, h, row));
    return true;
  }

  // REQUIRES: s.mu held; key not cached.
  void InsertRow(Stripe& s, uint64_t key, const uint8_t* row, uint8_t flags) {
    const Handle h = s.policy.Insert(key);
    s.arena.Grow(s.policy.handle_limit());
    std::memcpy(s.arena.row(h), row, row_bytes_);
    if (s.flags.size() < s.policy.handle_limit()) s.flags.resize(s.policy.handle_limit());
    s.flags[h] = flags;
    s.dirty += (flags & kDirty) ? 1 : 0;
    ++s.inserted;
    s.policy.Touch(h, Frequency(s, h, row));
  }

  // How far Trim evicts each stripe:
  //   kBudget: down to its capacity;
  //   kRoomForInserts: a deferred eviction. The rows inserted until the next one (a pass's
  //     new keys, mostly) would take the cache over its budget meanwhile, and the arena
  //     would keep that high-water mark; so it evicts below the capacity by as many rows as
  //     came in since the last eviction, and an eighth more (passes differ a little).
  enum class Target { kBudget, kRoomForInserts };

  Status Trim(Target target) {
    return EvictStripes([&](Stripe& s, size_t) {
      const size_t room = target == Target::kBudget ? 0 : std::min(s.inserted + s.inserted / 8, s.capacity_rows / 2);
      s.inserted = 0;
      return Keep{s.capacity_rows - room};
    });
  }

  // REQUIRES: s.mu held. Whether stripe j can take the keys of group j that it does not
  // cache without passing its budget; *incoming: how many those are, and *cached (sorted)
  // the handles of the others, when given.
  bool RoomIn(Stripe& s, const uint64_t* keys, const StripeGroups& groups, size_t j, size_t* incoming = nullptr,
              std::vector<Handle>* cached = nullptr) const {
    const uint32_t begin = groups.begin[j], end = groups.begin[j + 1];
    if (s.policy.size() + (end - begin) <= s.capacity_rows) return true;  // even if all are new
    size_t fresh = 0;
    for (uint32_t k = begin; k < end; ++k) {
      if (k + kPrefetchAhead < end) s.policy.Prefetch(keys[groups.order[k + kPrefetchAhead]]);
      const Handle h = s.policy.Find(keys[groups.order[k]]);
      if (h == CachePolicy::kNone) {
        ++fresh;
      } else if (cached != nullptr) {
        cached->push_back(h);
      }
    }
    if (cached != nullptr) std::sort(cached->begin(), cached->end());
    if (incoming != nullptr) *incoming = fresh;
    return s.policy.size() + fresh <= s.capacity_rows;
  }

  // A stripe the new keys would take over its budget evicts what they need there first,
  // sparing the rows of the keys put, so the cache and its arena never grow past the budget
  // for a Put.
  Status MakeRoom(const uint64_t* keys, const StripeGroups& groups) {
    std::vector<Handle> spared;
    return EvictStripes([&](Stripe& s, size_t j) {
      spared.clear();
      size_t incoming = 0;
      if (RoomIn(s, keys, groups, j, &incoming, &spared)) return Keep{s.policy.size()};
      return Keep{s.capacity_rows - std::min(incoming, s.capacity_rows), &spared};
    });
  }

  // Rows a stripe keeps after an eviction, and the handles spared from it (sorted).
  struct Keep {
    size_t rows = 0;
    const std::vector<Handle>* spared = nullptr;
  };

  // Evicts each stripe j down to keep_of(stripe, j) (called under its lock), writing dirty
  // victims in batches.
  template <typename KeepOf>
  Status EvictStripes(const KeepOf& keep_of) {
    FlushBatch batch;
    for (size_t j = 0; j < stripes_.size(); ++j) {
      Stripe& s = *stripes_[j];
      {
        std::lock_guard lock(s.mu);
        EvictLocked(s, keep_of(s, j), &batch);
      }
      if (batch.keys.size() >= options_.flush_batch_rows) STRATA_RETURN_IF_ERROR(WriteEvicted(&batch));
    }
    return batch.keys.empty() ? Status::OK() : WriteEvicted(&batch);
  }

  // REQUIRES: s.mu held. Evicts s down to keep.rows in one PopVictims; dirty victims join
  // *batch.
  void EvictLocked(Stripe& s, const Keep& keep, FlushBatch* batch) {
    if (s.policy.size() <= keep.rows) return;
    std::vector<CachePolicy::Victim> victims;
    std::function<bool(Handle)> spare;
    if (keep.spared != nullptr && !keep.spared->empty()) {
      spare = [&](Handle h) { return std::binary_search(keep.spared->begin(), keep.spared->end(), h); };
    }
    s.policy.PopVictims(s.policy.size() - keep.rows, CachePolicy::Pins::kKeep, &victims, spare);
    for (const CachePolicy::Victim& v : victims) {
      ++s.evictions;
      if (!(s.flags[v.handle] & kDirty)) continue;
      ++s.dirty_evictions;
      --s.dirty;
      batch->Add(v.key, s.arena.row(v.handle), row_bytes_, s.flags[v.handle]);
    }
  }

  // Writes evicted dirty rows in backing Puts of up to flush_batch_rows. If one fails, the
  // rows not yet written go back into the cache, still dirty, so nothing is lost; the error
  // is returned.
  Status WriteEvicted(FlushBatch* batch) {
    Status st;
    const size_t total = batch->keys.size();
    for (size_t begin = 0; begin < total; begin += options_.flush_batch_rows) {
      const size_t n = std::min(options_.flush_batch_rows, total - begin);
      st = backing_->PutKnown(&batch->keys[begin], n, &batch->rows[begin * row_bytes_], &batch->in_backing[begin]);
      if (!st.ok()) {
        for (size_t i = begin; i < total; ++i) {
          Stripe& s = StripeOf(batch->keys[i]);
          std::lock_guard lock(s.mu);
          InsertRow(s, batch->keys[i], &batch->rows[i * row_bytes_], kDirty | (batch->in_backing[i] ? kInBacking : 0));
        }
        break;
      }
      Written(&batch->keys[begin], n);
    }
    batch->Clear();
    return st;
  }

  // Records n keys as written to the backing store.
  void Written(const uint64_t* keys, size_t n) {
    ForEachByStripe(keys, n, [&](Stripe& s, size_t i) { s.bloom.Add(keys[i]); });
    rows_flushed_ += n;
    ++flush_batches_;
  }

  const MemPsOptions options_;
  const std::unique_ptr<RowStore> backing_;
  const size_t row_bytes_;
  const uint64_t capacity_rows_;
  const bool bloom_enabled_;  // the backing store was empty at open
  std::vector<std::unique_ptr<Stripe>> stripes_;
  // Touched only by externally serialized calls.
  uint64_t rows_flushed_ = 0;
  uint64_t flush_batches_ = 0;
};

}  // namespace

Status NewMemPs(const MemPsOptions& options, std::unique_ptr<RowStore> backing,
                std::unique_ptr<MemPs>* out) {
  if (backing == nullptr) return Status::InvalidArgument("mem-ps: no backing store");
  if (options.stripes < 1) return Status::InvalidArgument("mem-ps: stripes must be >= 1");
  if (options.flush_batch_rows < 1) return Status::InvalidArgument("mem-ps: flush batch must be >= 1 row");
  if (options.bloom_bits_per_key < 1) return Status::InvalidArgument("mem-ps: bloom bits per key must be >= 1");
  if (options.freq_offset >= 0 &&
      static_cast<size_t>(options.freq_offset) + sizeof(uint32_t) > backing->row_bytes()) {
    return Status::InvalidArgument("mem-ps: freq offset " + std::to_string(options.freq_offset) +
                                   " leaves no room for a u32 in a " +
                                   std::to_string(backing->row_bytes()) + "-byte row");
  }
  *out = std::make_unique<MemPsImpl>(options, std::move(backing));
  return Status::OK();
}

}  // namespace strata
