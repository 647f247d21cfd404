// BulkStaging: the host side of the HBM-PS's bulk calls (Insert, Stage, Export). It splits
// a call's keys by device shard and moves each shard's keys and rows through one bounded
// page-locked chunk, so a pass of any size crosses the bus at pinned speed without a
// pass-sized host copy: it holds at most one chunk (kChunkBytes, grown by half at most)
// between calls. The caller waits for each chunk's copies before packing the next.
// Not thread-safe; one per calling thread (CudaHbmPs keeps one for the bulk calls and one
// for the Stage-in thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pinned_buffer.cuh"
#include "strata/common/partition.h"

namespace strata::gpu {

class BulkStaging {
 public:
  static constexpr size_t kChunkBytes = size_t{8} << 20;

  explicit BulkStaging(int shards) : parts_(shards) {}

  // parts(g): the positions (ascending) of shard g's keys among keys (n).
  void Split(const uint64_t* keys, size_t n) {
    const int G = static_cast<int>(parts_.size());
    for (auto& p : parts_) p.clear();
    for (size_t i = 0; i < n; ++i) parts_[G == 1 ? 0 : DeviceShard(keys[i], G)].push_back(static_cast<uint32_t>(i));
  }
  const std::vector<uint32_t>& part(size_t g) const { return parts_[g]; }

  // Entries of item_bytes (and a key) that fit one chunk.
  static size_t ChunkRows(size_t item_bytes) { return std::max<size_t>(1, kChunkBytes / (item_bytes + 8)); }

  // Lays out a chunk of `rows` keys and items and makes room for it.
  Status Prepare(size_t rows, size_t item_bytes) {
    PinnedLayout layout;
    keys_at_ = layout.Take<uint64_t>(rows);
    items_at_ = layout.Take<uint8_t>(rows * item_bytes);
    return chunk_.Reserve(layout.bytes());
  }

  // Packs keys[part[i]] and (when items is given) the item_bytes records items[part[i]] for
  // i in [begin, end) into the chunk prepared for at least end - begin rows.
  void Pack(const uint64_t* keys, const uint8_t* items, size_t item_bytes, const std::vector<uint32_t>& part,
            size_t begin, size_t end) {
    uint64_t* k = chunk_keys();
    uint8_t* it = chunk_items();
    for (size_t i = begin; i < end; ++i) {
      k[i - begin] = keys[part[i]];
      if (items != nullptr) std::memcpy(it + (i - begin) * item_bytes, items + part[i] * item_bytes, item_bytes);
    }
  }

  // The reverse for items: out[part[i]] = the chunk's record i - begin.
  void Unpack(uint8_t* out, size_t item_bytes, const std::vector<uint32_t>& part, size_t begin, size_t end) const {
    const uint8_t* it = chunk_.At<uint8_t>(items_at_);
    for (size_t i = begin; i < end; ++i) std::memcpy(out + part[i] * item_bytes, it + (i - begin) * item_bytes, item_bytes);
  }

  uint64_t* chunk_keys() const { return chunk_.At<uint64_t>(keys_at_); }
  uint8_t* chunk_items() const { return chunk_.At<uint8_t>(items_at_); }

  // Gives back the positions' memory (a pass's worth). The chunk stays: it is bounded, and
  // pinning memory anew at every call (the push-back exports 16k rows a call) would cost
  // more than the copies.
  void Release() {
    for (auto& p : parts_) std::vector<uint32_t>().swap(p);
  }
  size_t capacity_bytes() const {
    size_t b = chunk_.capacity();
    for (const auto& p : parts_) b += p.capacity() * sizeof(uint32_t);
    return b;
  }

 private:
  std::vector<std::vector<uint32_t>> parts_;
  PinnedBuffer chunk_;
  size_t keys_at_ = 0, items_at_ = 0;
};

}  // namespace strata::gpu
