// HandleTable: a hash index of 32-bit handles whose 64-bit keys live with their owner. The
// owner keeps its records in an array (rows of an arena, entries of a cache policy) and
// passes key_of (handle -> key) to each call; the table stores only the handles, in an open-addressing array
// probed linearly. The load factor stays at most 3/4 (the array doubles past it), so the
// index costs 4 / load bytes a key: 5.3 to 10.7, about 7 on average. Erase shifts later
// entries back (no tombstones), so lookups never slow down with churn.
// Thread safety: none; Find is safe from many threads while nothing mutates.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "strata/common/hash.h"

namespace strata {

class HandleTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The handle of key, or kNone.
  template <typename KeyOf>
  uint32_t Find(uint64_t key, const KeyOf& key_of) const {
    if (size_ == 0) return kNone;
    for (size_t i = Home(key);; i = Next(i)) {
      const uint32_t h = slots_[i];
      if (h == kNone || key_of(h) == key) return h;
    }
  }

  // Indexes handle h under key. REQUIRES: key absent, key_of(h) == key.
  template <typename KeyOf>
  void Insert(uint64_t key, uint32_t h, const KeyOf& key_of) {
    assert(h != kNone && Find(key, key_of) == kNone);
    if (4 * (size_ + 1) > 3 * slots_.size()) Grow(key_of);
    size_t i = Home(key);
    while (slots_[i] != kNone) i = Next(i);
    slots_[i] = h;
    ++size_;
  }

  // Removes key. REQUIRES: key present, and key_of still answers for every indexed handle.
  template <typename KeyOf>
  void Erase(uint64_t key, const KeyOf& key_of) {
    size_t hole = Home(key);
    while (key_of(slots_[hole]) != key) hole = Next(hole);
    // Backward shift: move up each later entry of the run whose home does not lie
    // cyclically in (hole, j], so every entry stays reachable from its home.
    for (size_t j = Next(hole); slots_[j] != kNone; j = Next(j)) {
      const size_t home = Home(key_of(slots_[j]));
      const bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole] = kNone;
    --size_;
  }

  // Empties the table and frees its array.
  void Clear() {
    std::vector<uint32_t>().swap(slots_);
    size_ = 0;
  }

  // Calls visit(handle) for every indexed handle, in table order.
  template <typename F>
  void ForEach(F&& visit) const {
    for (uint32_t h : slots_) {
      if (h != kNone) visit(h);
    }
  }

  size_t size() const { return size_; }
  size_t bytes() const { return slots_.capacity() * sizeof(uint32_t); }

 private:
  size_t Home(uint64_t key) const { return static_cast<size_t>(FibonacciHash(key) >> shift_); }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  template <typename KeyOf>
  void Grow(const KeyOf& key_of) {
    std::vector<uint32_t> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), kNone);
    shift_ = 64 - __builtin_ctzll(slots_.size());
    for (uint32_t h : old) {
      if (h == kNone) continue;
      size_t i = Home(key_of(h));
      while (slots_[i] != kNone) i = Next(i);
      slots_[i] = h;
    }
  }

  std::vector<uint32_t> slots_;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace strata
