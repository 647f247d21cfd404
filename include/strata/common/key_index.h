// KeyIndex: a flat open-addressing map from 64-bit key to a dense 32-bit id (0, 1, 2, ...
// in first-insertion order), for the hot paths that dedup or look up keys per step.
// Reset keeps the allocation. Its arrays are HugeVectors: a pass's index of the keys a rank
// owns is made anew each pass and is megabytes, read at random (on one rank, 385,000 keys
// took 8.5-9.5 ms to index in 4 KiB pages, 5.5-6.5 in huge ones). Not thread-safe; Find is
// safe from many threads while no Insert runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "strata/common/hash.h"
#include "strata/common/huge_pages.h"
#include "strata/common/prefetch.h"

namespace strata {

class KeyIndex {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;

  // Empties the map and makes room for max_keys keys at load factor <= 0.5.
  void Reset(size_t max_keys) {
    size_t cap = 64;
    while (cap < 2 * max_keys) cap <<= 1;
    if (ids_.size() != cap) {
      keys_.resize(cap);
      ids_.assign(cap, kNone);
    } else {
      std::fill(ids_.begin(), ids_.end(), kNone);
    }
    size_ = 0;
  }

  // Returns (id of key, true if newly inserted). REQUIRES: size() < Reset's max_keys.
  std::pair<uint32_t, bool> Insert(uint64_t key) {
    size_t s = Slot(key);
    while (ids_[s] != kNone) {
      if (keys_[s] == key) return {ids_[s], false};
      s = (s + 1) & (ids_.size() - 1);
    }
    keys_[s] = key;
    ids_[s] = static_cast<uint32_t>(size_);
    return {static_cast<uint32_t>(size_++), true};
  }

  // The id of key, or kNone.
  uint32_t Find(uint64_t key) const {
    for (size_t s = Slot(key); ids_[s] != kNone; s = (s + 1) & (ids_.size() - 1)) {
      if (keys_[s] == key) return ids_[s];
    }
    return kNone;
  }

  // Starts loading key's first probe (Find and Insert miss the cache on large maps).
  void Prefetch(uint64_t key) const {
    const size_t s = Slot(key);
    PrefetchLine(&ids_[s]);
    PrefetchLine(&keys_[s]);
  }

  size_t size() const { return size_; }

 private:
  size_t Slot(uint64_t key) const { return (FibonacciHash(key) >> 20) & (ids_.size() - 1); }

  HugeVector<uint64_t> keys_;
  HugeVector<uint32_t> ids_;
  size_t size_ = 0;
};

}  // namespace strata
