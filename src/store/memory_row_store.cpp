// In-memory RowStore: 64 lock-striped shards. A shard keeps each key with its row in one
// arena slot ([key u64 | row], slots numbered in insertion order, never freed since a store
// only grows) and indexes the slots with a HandleTable, so a row costs its bytes plus 8
// for the key plus about 9 for the index (a 136-byte row about 1.13x, a 72-byte row 1.24x);
// Erase moves a shard's last slot into the hole, so slots stay dense (and are reused);
// stats().dram_bytes adds up what is allocated. Gets on different shards run in parallel; a
// shard's shared_mutex lets Gets on one shard run together too. Used as the whole store when
// the model fits in DRAM.
//
// A Get or Put takes its keys shard by shard (each shard's keys in the call's order, its
// lock taken once), and a large one spreads the shards over the store's own threads when
// no other call is using them: a pass's pull and write-back are a few hundred thousand
// rows. A shard's slots are added in the same order either way, so the store's contents
// and Scan order do not depend on the threads.
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "strata/common/handle_table.h"
#include "strata/common/key_groups.h"
#include "strata/common/partition.h"
#include "strata/common/row_arena.h"
#include "strata/common/spare_threads.h"
#include "strata/store/row_store.h"

namespace strata {
namespace {

constexpr int kShards = 64;

class MemoryRowStore final : public RowStore {
  struct Shard {
    explicit Shard(size_t slot_bytes) : arena(slot_bytes, SIZE_MAX) {}

    // REQUIRES: mu held.
    uint64_t key(uint32_t id) const {
      uint64_t k;
      std::memcpy(&k, arena.row(id), sizeof(k));
      return k;
    }
    uint8_t* row(uint32_t id) { return arena.row(id) + sizeof(uint64_t); }
    const uint8_t* row(uint32_t id) const { return arena.row(id) + sizeof(uint64_t); }
    auto Keys() const {
      return [this](uint32_t id) { return key(id); };
    }
    // REQUIRES: mu held alone; key absent. Returns the new slot, its row not yet written.
    uint32_t Add(uint64_t k) {
      const uint32_t id = size++;
      arena.Grow(size);
      std::memcpy(arena.row(id), &k, sizeof(k));
      index.Insert(k, id, Keys());
      return id;
    }

    mutable std::shared_mutex mu;
    // protected by mu
    RowArena arena;
    HandleTable index;
    uint32_t size = 0;
  };

 public:
  MemoryRowStore(size_t row_bytes, int threads)
      : row_bytes_(row_bytes), threads_(threads) {
    for (auto& s : shards_) s = std::make_unique<Shard>(sizeof(uint64_t) + row_bytes);
  }

  size_t row_bytes() const override { return row_bytes_; }

  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    ForEachShard(keys, n, [&](const Shard& s, const uint32_t* pos, size_t m) {
      std::shared_lock lock(s.mu);
      for (size_t j = 0; j < m; ++j) {
        const size_t i = pos[j];
        const uint32_t id = s.index.Find(keys[i], s.Keys());
        found[i] = id != HandleTable::kNone;
        if (found[i]) std::memcpy(rows + i * row_bytes_, s.row(id), row_bytes_);
      }
    });
    return Status::OK();
  }

  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    ForEachShard(keys, n, [&](Shard& s, const uint32_t* pos, size_t m) {
      std::unique_lock lock(s.mu);
      for (size_t j = 0; j < m; ++j) {
        const size_t i = pos[j];
        uint32_t id = s.index.Find(keys[i], s.Keys());
        if (id == HandleTable::kNone) id = s.Add(keys[i]);
        std::memcpy(s.row(id), rows + i * row_bytes_, row_bytes_);
      }
    });
    user_bytes_ += n * row_bytes_;
    return Status::OK();
  }

  // The shard's last slot moves into the erased one, so slots stay dense.
  Status Erase(const uint64_t* keys, size_t n) override {
    for (size_t i = 0; i < n; ++i) {
      Shard& s = ShardOf(keys[i]);
      std::unique_lock lock(s.mu);
      const uint32_t id = s.index.Find(keys[i], s.Keys());
      if (id == HandleTable::kNone) continue;
      s.index.Erase(keys[i], s.Keys());
      const uint32_t last = --s.size;
      if (id == last) continue;
      const uint64_t moved = s.key(last);
      s.index.Erase(moved, s.Keys());
      std::memcpy(s.arena.row(id), s.arena.row(last), sizeof(uint64_t) + row_bytes_);
      s.index.Insert(moved, id, s.Keys());
    }
    return Status::OK();
  }

  Status Sync() override { return Status::OK(); }

  Status Scan(const std::function<void(uint64_t, const uint8_t*)>& visit) override {
    for (const auto& s : shards_) {
      std::shared_lock lock(s->mu);
      for (uint32_t id = 0; id < s->size; ++id) visit(s->key(id), s->row(id));
    }
    return Status::OK();
  }

  uint64_t num_keys() const override {
    uint64_t n = 0;
    for (const auto& s : shards_) {
      std::shared_lock lock(s->mu);
      n += s->size;
    }
    return n;
  }

  StoreStats stats() const override {
    StoreStats st;
    for (const auto& s : shards_) {
      std::shared_lock lock(s->mu);
      st.live_keys += s->size;
      st.index_bytes += s->index.bytes() + sizeof(uint64_t) * s->size;  // the table and the keys
      st.dram_bytes += s->index.bytes() + s->arena.memory_bytes();
    }
    st.logical_bytes = st.live_keys * row_bytes_;
    st.user_bytes_written = user_bytes_;
    return st;
  }

 private:
  static int ShardIndex(uint64_t key) { return static_cast<int>(Mix64(key) >> 58); }
  const Shard& ShardOf(uint64_t key) const { return *shards_[ShardIndex(key)]; }
  Shard& ShardOf(uint64_t key) { return *shards_[ShardIndex(key)]; }

  // body(shard, positions, count) for each shard that keys (n) touch, on the store's
  // threads when the call is large.
  template <typename Body>
  void ForEachShard(const uint64_t* keys, size_t n, Body body) {
    const KeyGroups g = GroupKeys(keys, n, kShards, ShardIndex);
    auto one = [&](size_t s) {
      if (g.begin[s + 1] > g.begin[s]) body(*shards_[s], g.order.data() + g.begin[s], g.begin[s + 1] - g.begin[s]);
    };
    if (n >= kKeysWorthAThread) {
      threads_.ParallelFor(kShards, one);
      return;
    }
    for (size_t s = 0; s < kShards; ++s) one(s);
  }

  const size_t row_bytes_;
  std::array<std::unique_ptr<Shard>, kShards> shards_;
  uint64_t user_bytes_ = 0;  // Put is externally serialized
  SpareThreads threads_;
};

}  // namespace

std::unique_ptr<RowStore> NewMemoryRowStore(size_t row_bytes, int threads) {
  return std::make_unique<MemoryRowStore>(row_bytes, threads);
}

}  // namespace strata
