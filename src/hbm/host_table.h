// HostTable: one host HBM-PS shard, an open-addressing (linear probing) hash table from
// key to a fixed-size row in a flat arena, rebuilt every pass with a capacity fixed at
// Reset. Find is safe from many threads while no Insert runs; Insert is single-threaded.
// A full table is an error naming the sizes, never a silent drop.
#pragma once

#include <cstdint>

#include "strata/common/hash.h"
#include "strata/common/huge_pages.h"
#include "strata/common/status.h"

namespace strata {

class HostTable {
 public:
  explicit HostTable(size_t row_bytes) : row_bytes_(row_bytes) {}

  // Drops every row; makes room for at least max_keys keys at load factor <= 0.5.
  void Reset(size_t max_keys);

  // Inserts or overwrites key's row (row_bytes). ResourceExhausted when full.
  Status Insert(uint64_t key, const uint8_t* row);

  // The row of key, or null when absent.
  uint8_t* Find(uint64_t key) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == kEmpty) return nullptr;
      if (keys_[slots_[i]] == key) return &arena_[static_cast<size_t>(slots_[i]) * row_bytes_];
    }
  }

  // A loop over many keys misses the cache three times a Find (slot, key, row): it calls
  // PrefetchSlot a few keys ahead, then PrefetchRow (which reads the slot) closer in.
  void PrefetchSlot(uint64_t key) const { __builtin_prefetch(&slots_[Hash(key) & (slots_.size() - 1)]); }
  void PrefetchRow(uint64_t key) const {
    const uint32_t slot = slots_[Hash(key) & (slots_.size() - 1)];
    if (slot == kEmpty) return;
    __builtin_prefetch(&keys_[slot]);
    __builtin_prefetch(&arena_[static_cast<size_t>(slot) * row_bytes_]);
  }

  size_t size() const { return keys_.size(); }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  static uint64_t Hash(uint64_t key) { return FibonacciHash(key) >> 17; }

  size_t row_bytes_;
  size_t max_keys_ = 0;
  HugeVector<uint32_t> slots_;  // index into keys_/arena_, or kEmpty
  HugeVector<uint64_t> keys_;
  HugeVector<uint8_t> arena_;
};

}  // namespace strata
