// MEM-PS (strata/mem/mem_ps.h): lock-striped DRAM row cache over a backing RowStore. Each
// stripe owns a CachePolicy (which doubles as its key index), a RowArena whose slots are
// the policy's handles, per-slot flags, the pins declared for rows not cached yet, and a
// Bloom filter of the keys it has written to the backing store.
//
// Placeholders. A key that a pass pinned and that a Get finds nowhere (a new key: most of
// a pass's keys on a long tail) gets its cache entry and arena slot at once, flagged
// kPlaceholder, holding no row. The pass's Put then finds the entry and fills it, where it
// would otherwise look the key up in the index, the filter and the pins of absent keys a
// second time, on the training thread; and a Get of the key meanwhile (a pass pulled ahead
// that shares it) answers not-found from it without asking the backing store. A
// placeholder counts in the budget as the row it reserves; it is never dirty, so eviction
// drops it without a write, and Scan and num_keys pass it over. Keys no pass
// pinned (reads for evaluation) get none.
//
// Threads. A call walks its keys stripe by stripe (ForEachInGroups); a call of 16k keys or
// more spreads the stripes over MemPsOptions::threads when no other call holds them. A
// visit touches only its stripe and its key's own outputs, and keys whose indices a visit
// collects are gathered afterwards in the walk's order (stripe by stripe), so the outcome
// is the serial walk's whatever the threads. Evictions stay on the caller's thread: their
// writes go to the backing store in stripe order.
#include "strata/mem/mem_ps.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strata/mem/bloom_filter.h"
#include "strata/common/row_arena.h"
#include "strata/common/key_groups.h"
#include "strata/common/partition.h"
#include "strata/common/spare_threads.h"
#include "strata/common/thread_name.h"
#include "strata/mem/cache_policy.h"

namespace strata {
namespace {

using Handle = CachePolicy::Handle;

constexpr uint8_t kDirty = 1;      // newer than the backing store's copy
constexpr uint8_t kInBacking = 2;  // the backing store holds some version of the key
constexpr uint8_t kPlaceholder = 4;  // no row yet: the key is in neither tier (see above)
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
  std::vector<uint8_t> flags;  // per handle: kDirty | kInBacking, or kPlaceholder alone
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
  // Room for n rows at once: grown by doubling, the rows would take up to twice their
  // bytes, three times while being copied.
  void Reserve(size_t n, size_t row_bytes) {
    keys.reserve(n);
    rows.reserve(n * row_bytes);
    in_backing.reserve(n);
  }
};

class MemPsImpl final : public MemPs {
 public:
  MemPsImpl(const MemPsOptions& o, std::unique_ptr<RowStore> backing)
      : options_(o),
        backing_(std::move(backing)),
        row_bytes_(backing_->row_bytes()),
        capacity_rows_(o.capacity_bytes / (row_bytes_ + kMemPsRowOverheadBytes)),
        bloom_enabled_(backing_->num_keys() == 0),
        threads_(o.threads) {
    const size_t n = static_cast<size_t>(o.stripes);
    for (size_t i = 0; i < n; ++i) {
      const size_t cap = WholeChunks(capacity_rows_ / n + (i < capacity_rows_ % n ? 1 : 0));
      stripes_.push_back(std::make_unique<Stripe>(row_bytes_, cap, o.bloom_bits_per_key));
    }
  }

  size_t row_bytes() const override { return row_bytes_; }

  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    const Misses misses = LookUpCached(keys, n, rows, found, /*reserve_absent=*/true);
    BackingRows in;
    STRATA_RETURN_IF_ERROR(ReadBacking(keys, misses.maybe_stored, &in));
    FillFromBacking(keys, misses.maybe_stored, in, rows, found);
    return Status::OK();
  }

  // The Get's reads from the backing store run beside the eviction's writes when the store
  // allows it: the keys it reads are not cached, so no eviction writes them, and the
  // eviction takes no row of keys, which are pinned. Placeholders and rows read go in
  // after the eviction, so the cache (and its arena) do not grow past the budget first.
  Status EvictThenGet(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    const Misses misses = LookUpCached(keys, n, rows, found, /*reserve_absent=*/false);
    BackingRows in;
    Status evicted, read;
    if (backing_->GetsBesidePuts() && !misses.maybe_stored.empty()) {
      std::thread reader([&] {
        NameThisThread("strata-memread");
        read = ReadBacking(keys, misses.maybe_stored, &in);
      });
      evicted = Evict();
      reader.join();
    } else {
      evicted = Evict();
      if (evicted.ok()) read = ReadBacking(keys, misses.maybe_stored, &in);
    }
    STRATA_RETURN_IF_ERROR(evicted);
    STRATA_RETURN_IF_ERROR(read);
    ReserveAbsent(keys, misses.absent);
    FillFromBacking(keys, misses.maybe_stored, in, rows, found);
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

  // A pass's keys nearly all have entries by now (its pinned rows and placeholders), so the
  // rest, looked up once, are few.
  Status PutIfRoom(const uint64_t* keys, size_t n, const uint8_t* rows, bool* put) override {
    const StripeGroups all = GroupByStripe(keys, n);
    std::vector<uint8_t> uncached(n);
    ForEachInGroups<kIndexOnly>(all, keys, [&](Stripe& s, size_t i) {
      uncached[i] = !OverwriteCached(s, keys[i], rows + i * row_bytes_);
    });
    const std::vector<size_t> rest = Marked(all, uncached, 1);  // keys with no entry
    *put = true;
    if (rest.empty()) return Status::OK();
    std::vector<uint64_t> rest_keys(rest.size());
    std::vector<uint8_t> rest_rows(rest.size() * row_bytes_);
    for (size_t j = 0; j < rest.size(); ++j) {
      rest_keys[j] = keys[rest[j]];
      std::memcpy(&rest_rows[j * row_bytes_], rows + rest[j] * row_bytes_, row_bytes_);
    }
    const StripeGroups groups = GroupByStripe(rest_keys.data(), rest.size());
    for (size_t j = 0; j < stripes_.size(); ++j) {
      Stripe& s = *stripes_[j];
      std::lock_guard lock(s.mu);
      *put = RoomIn(s, rest_keys.data(), groups, j);
      if (!*put) return Status::OK();
    }
    return PutGroups(rest_keys.data(), groups, rest_rows.data());
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
      sp->policy.ForEach([&](uint64_t key, uint32_t slot) {
        if (!(sp->flags[slot] & kPlaceholder)) visit(key, sp->arena.row(slot));
      });
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
      sp->policy.ForEach([&](uint64_t, uint32_t slot) { n += !(sp->flags[slot] & (kInBacking | kPlaceholder)); });
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
  using StripeGroups = KeyGroups;
  StripeGroups GroupByStripe(const uint64_t* keys, size_t n) const {
    return GroupKeys(keys, n, stripes_.size(), [this](uint64_t key) { return StripeIndex(key); });
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
    auto stripe = [&](size_t j) {
      const uint32_t begin = g.begin[j], end = g.begin[j + 1];
      if (begin == end) return;
      Stripe& s = *stripes_[j];
      std::lock_guard lock(s.mu);
      for (uint32_t k = begin; k < std::min(end, begin + kPrefetchAhead); ++k) Prefetch<kWithFilter>(s, keys[g.order[k]]);
      for (uint32_t k = begin; k < end; ++k) {
        if (k + kPrefetchAhead < end) Prefetch<kWithFilter>(s, keys[g.order[k + kPrefetchAhead]]);
        visit(s, g.order[k]);
      }
    };
    if (g.order.size() >= kKeysWorthAThread) {
      threads_.ParallelFor(stripes_.size(), stripe);
      return;
    }
    for (size_t j = 0; j < stripes_.size(); ++j) stripe(j);
  }

  // The indices i of g's keys whose mark[i] is `value`, in the walk's order.
  static std::vector<size_t> Marked(const StripeGroups& g, const std::vector<uint8_t>& mark, uint8_t value) {
    std::vector<size_t> out;
    for (uint32_t i : g.order) {
      if (mark[i] == value) out.push_back(i);
    }
    return out;
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
    std::vector<uint8_t> maybe_held(groups.order.size());
    ForEachInGroups(groups, keys, [&](Stripe& s, size_t i) {
      if (OverwriteCached(s, keys[i], rows + i * row_bytes_)) return;
      if (bloom_enabled_ && !s.bloom.MayContain(keys[i])) {
        InsertRow(s, keys[i], rows + i * row_bytes_, kDirty);
      } else {
        maybe_held[i] = 1;
      }
    });
    const std::vector<size_t> probe = Marked(groups, maybe_held, 1);  // uncached keys the backing store may hold
    // Only to keep num_keys() exact: is the key new to the store as a whole?
    BackingRows in;
    STRATA_RETURN_IF_ERROR(ReadBacking(keys, probe, &in));
    ForEachByStripe(in.keys.data(), in.keys.size(), [&](Stripe& s, size_t j) {
      const uint8_t* row = rows + probe[j] * row_bytes_;
      ++s.backing_lookups;
      s.backing_rows_read += in.found[j];
      // A concurrent Get may have loaded the key's older row meanwhile.
      if (!OverwriteCached(s, in.keys[j], row)) InsertRow(s, in.keys[j], row, kDirty | (in.found[j] ? kInBacking : 0));
    });
    return Status::OK();
  }

  // What a Get's cache lookups leave for the backing store: indices into its keys.
  struct Misses {
    std::vector<size_t> maybe_stored;  // keys the backing store may hold
    std::vector<size_t> absent;        // keys in neither tier with no entry, left to ReserveAbsent
  };
  // Rows read from the backing store for keys[which[j]]: keys[j], rows[j], found[j].
  struct BackingRows {
    std::vector<uint64_t> keys;
    std::vector<uint8_t> rows, found;
  };

  // A Get's first step: copies the cached rows (found 1) and sorts out the rest. A key
  // with a placeholder, or that the filter shows the backing store never held, is not
  // found; a pinned one of the latter gets its placeholder now when reserve_absent, else
  // joins absent.
  Misses LookUpCached(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found, bool reserve_absent) {
    constexpr uint8_t kMaybeStored = 1, kAbsent = 2;
    const StripeGroups g = GroupByStripe(keys, n);
    std::vector<uint8_t> miss(n);
    ForEachInGroups(g, keys, [&](Stripe& s, size_t i) {
      const Handle h = s.policy.Find(keys[i]);
      found[i] = CopyCached(s, h, rows + i * row_bytes_);
      if (found[i]) {
        ++s.hits;
        return;
      }
      ++s.misses;
      if (h != CachePolicy::kNone) {  // a placeholder
        ++s.bloom_skips;
      } else if (bloom_enabled_ && !s.bloom.MayContain(keys[i])) {
        ++s.bloom_skips;
        if (reserve_absent) {
          ReserveIfPinned(s, keys[i]);
        } else {
          miss[i] = kAbsent;
        }
      } else {
        miss[i] = kMaybeStored;
      }
    });
    return Misses{Marked(g, miss, kMaybeStored), Marked(g, miss, kAbsent)};
  }

  // A Get's last step: caches the rows read for keys[which[j]] and copies them out; a key
  // found in neither tier gets its placeholder if pinned. A concurrent Get or Put may have
  // cached a key meanwhile: that row (the same, or newer) wins.
  void FillFromBacking(const uint64_t* keys, const std::vector<size_t>& which, const BackingRows& in, uint8_t* rows,
                       uint8_t* found) {
    ForEachByStripe(in.keys.data(), in.keys.size(), [&](Stripe& s, size_t j) {
      const size_t i = which[j];
      ++s.backing_lookups;
      const Handle h = s.policy.Find(keys[i]);
      found[i] = CopyCached(s, h, rows + i * row_bytes_);
      if (found[i] || h != CachePolicy::kNone) return;
      if (!in.found[j]) {
        ReserveIfPinned(s, keys[i]);
        return;
      }
      ++s.backing_rows_read;
      InsertRow(s, keys[i], &in.rows[j * row_bytes_], kInBacking);
      std::memcpy(rows + i * row_bytes_, &in.rows[j * row_bytes_], row_bytes_);
      found[i] = 1;
    });
  }

  // Placeholders for keys[which[...]] that are pinned and still have no entry.
  void ReserveAbsent(const uint64_t* keys, const std::vector<size_t>& which) {
    std::vector<uint64_t> absent(which.size());
    for (size_t j = 0; j < which.size(); ++j) absent[j] = keys[which[j]];
    ForEachByStripe<kIndexOnly>(absent.data(), absent.size(), [&](Stripe& s, size_t j) {
      if (s.policy.Find(absent[j]) == CachePolicy::kNone) ReserveIfPinned(s, absent[j]);
    });
  }

  // Reads keys[which[j]] from the backing store into *in (no stripe lock held: it may
  // block on the disk).
  Status ReadBacking(const uint64_t* keys, const std::vector<size_t>& which, BackingRows* in) {
    if (which.empty()) return Status::OK();
    in->keys.resize(which.size());
    for (size_t j = 0; j < which.size(); ++j) in->keys[j] = keys[which[j]];
    in->rows.resize(which.size() * row_bytes_);
    in->found.assign(which.size(), 0);
    return backing_->Get(in->keys.data(), in->keys.size(), in->rows.data(), in->found.data());
  }

  // REQUIRES: s.mu held; h: a key's handle or kNone. Copies the row to out and touches it;
  // false when there is none (no entry, or a placeholder).
  bool CopyCached(Stripe& s, Handle h, uint8_t* out) {
    if (h == CachePolicy::kNone || (s.flags[h] & kPlaceholder)) return false;
    const uint8_t* row = s.arena.row(h);
    std::memcpy(out, row, row_bytes_);
    s.policy.Touch(h, Frequency(s, h, row));
    return true;
  }

  // REQUIRES: s.mu held. Replaces the cached row of key (or fills its placeholder) by row,
  // now dirty; false if the key has no entry.
  bool OverwriteCached(Stripe& s, uint64_t key, const uint8_t* row) {
    const Handle h = s.policy.Find(key);
    if (h == CachePolicy::kNone) return false;
    std::memcpy(s.arena.row(h), row, row_bytes_);
    if (!(s.flags[h] & kDirty)) ++s.dirty;
    s.flags[h] = (s.flags[h] & kInBacking) | kDirty;
    s.policy.Touch(h, Frequency(s, h, row));
    return true;
  }

  // REQUIRES: s.mu held; key not cached.
  void InsertRow(Stripe& s, uint64_t key, const uint8_t* row, uint8_t flags) {
    const Handle h = s.policy.Insert(key);
    AddSlot(s, h, flags);
    std::memcpy(s.arena.row(h), row, row_bytes_);
    s.dirty += (flags & kDirty) ? 1 : 0;
    s.policy.Touch(h, Frequency(s, h, row));
  }

  // REQUIRES: s.mu held; key has no entry and neither tier holds it. Gives a pinned key a
  // placeholder; an unpinned one none.
  void ReserveIfPinned(Stripe& s, uint64_t key) {
    const Handle h = s.policy.InsertPinned(key);
    if (h != CachePolicy::kNone) AddSlot(s, h, kPlaceholder);
  }

  // REQUIRES: s.mu held. Makes the arena slot and flags of a handle just inserted.
  void AddSlot(Stripe& s, Handle h, uint8_t flags) {
    s.arena.Grow(s.policy.handle_limit());
    if (s.flags.size() < s.policy.handle_limit()) s.flags.resize(s.policy.handle_limit());
    s.flags[h] = flags;
    ++s.inserted;
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
    batch.Reserve(options_.eviction_batch_rows(), row_bytes_);
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
  mutable SpareThreads threads_;  // MemPsOptions::threads, for large walks
  // Written by Flush and evictions (one at a time), read by mem_stats at any time.
  std::atomic<uint64_t> rows_flushed_{0};
  std::atomic<uint64_t> flush_batches_{0};
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
