// In-memory RowStore: 64 lock-striped shards, each a key -> slot map over a flat arena of
// rows. Gets on different shards run in parallel; a shard's shared_mutex lets Gets on one
// shard run together too. Used as the whole store when the model fits in DRAM.
#include <array>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "strata/common/partition.h"
#include "strata/store/row_store.h"

namespace strata {
namespace {

constexpr int kShards = 64;

class MemoryRowStore final : public RowStore {
 public:
  explicit MemoryRowStore(size_t row_bytes) : row_bytes_(row_bytes) {}

  size_t row_bytes() const override { return row_bytes_; }

  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    for (size_t i = 0; i < n; ++i) {
      const Shard& s = shards_[ShardOf(keys[i])];
      std::shared_lock lock(s.mu);
      auto it = s.slot.find(keys[i]);
      found[i] = it != s.slot.end();
      if (found[i]) std::memcpy(rows + i * row_bytes_, &s.arena[it->second * row_bytes_], row_bytes_);
    }
    return Status::OK();
  }

  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    for (size_t i = 0; i < n; ++i) {
      Shard& s = shards_[ShardOf(keys[i])];
      std::unique_lock lock(s.mu);
      auto [it, inserted] = s.slot.try_emplace(keys[i], s.slot.size());
      if (inserted) {
        s.keys.push_back(keys[i]);
        s.arena.resize(s.arena.size() + row_bytes_);
      }
      std::memcpy(&s.arena[it->second * row_bytes_], rows + i * row_bytes_, row_bytes_);
      user_bytes_ += row_bytes_;
    }
    return Status::OK();
  }

  Status Sync() override { return Status::OK(); }

  Status Scan(const std::function<void(uint64_t, const uint8_t*)>& visit) override {
    for (const Shard& s : shards_) {
      std::shared_lock lock(s.mu);
      for (size_t i = 0; i < s.keys.size(); ++i) visit(s.keys[i], &s.arena[i * row_bytes_]);
    }
    return Status::OK();
  }

  uint64_t num_keys() const override {
    uint64_t n = 0;
    for (const Shard& s : shards_) {
      std::shared_lock lock(s.mu);
      n += s.slot.size();
    }
    return n;
  }

  StoreStats stats() const override {
    StoreStats st;
    st.live_keys = num_keys();
    st.logical_bytes = st.live_keys * row_bytes_;
    st.user_bytes_written = user_bytes_;
    // unordered_map node (key, slot, next pointer, hash) plus the bucket pointer and key list.
    st.index_bytes = st.live_keys * (sizeof(uint64_t) * 4 + sizeof(void*) * 2);
    return st;
  }

 private:
  static int ShardOf(uint64_t key) { return static_cast<int>(Mix64(key) >> 58); }

  struct Shard {
    mutable std::shared_mutex mu;
    // protected by mu
    std::unordered_map<uint64_t, size_t> slot;
    std::vector<uint64_t> keys;
    std::vector<uint8_t> arena;
  };

  const size_t row_bytes_;
  std::array<Shard, kShards> shards_;
  uint64_t user_bytes_ = 0;  // Put is externally serialized
};

}  // namespace

std::unique_ptr<RowStore> NewMemoryRowStore(size_t row_bytes) {
  return std::make_unique<MemoryRowStore>(row_bytes);
}

}  // namespace strata
