// HandleTable: a hash index of 32-bit handles whose 64-bit keys live with their owner. The
// owner keeps its records in an array (rows of an arena, entries of a cache policy) and
// passes key_of (handle -> key) to each call; the table stores only the handles, in an
// open-addressing array probed linearly, with a one-byte tag of each key's hash beside it.
// A probe reads the tags first and asks key_of only where the tag matches, so a lookup of
// an absent key (most of them, in a cache over a stream of new keys) touches no record, and
// a present key's record is read once. The load factor stays at most 3/4 (the array doubles
// past it), so a key costs 5 / load bytes: 6.7 to 13.3, about 9 on average; a table
// Reserve()d for its largest size (a cache of known capacity) has any size, not a power of
// two (the home slot is the hash scaled to the size), and costs 6.7 bytes a key when full.
// Erase shifts later entries back (no tombstones), so lookups never slow down with churn.
// Thread safety: none; Find is safe from many threads while nothing mutates.
#pragma once

#include <cassert>
#include <cstdint>
#include "strata/common/hash.h"
#include "strata/common/huge_pages.h"
#include "strata/common/prefetch.h"

namespace strata {

class HandleTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The handle of key, or kNone.
  template <typename KeyOf>
  uint32_t Find(uint64_t key, const KeyOf& key_of) const {
    if (size_ == 0) return kNone;
    const uint64_t hash = FibonacciHash(key);
    const uint8_t tag = Tag(hash);
    for (size_t i = Home(hash);; i = Next(i)) {
      if (tags_[i] == kEmpty) return kNone;
      if (tags_[i] == tag && key_of(slots_[i]) == key) return slots_[i];
    }
  }

  // Starts loading the slots a Find or Insert of key reads first, so that a caller handling
  // many keys can overlap their cache misses (prefetch a few keys ahead).
  void Prefetch(uint64_t key) const {
    if (slots_.empty()) return;
    const size_t i = Home(FibonacciHash(key));
    PrefetchLine(&tags_[i]);
    PrefetchLine(&slots_[i]);
  }

  // Indexes handle h under key. REQUIRES: key absent, key_of(h) == key.
  template <typename KeyOf>
  void Insert(uint64_t key, uint32_t h, const KeyOf& key_of) {
    assert(h != kNone && Find(key, key_of) == kNone);
    if (4 * (size_ + 1) > 3 * slots_.size()) Grow(key_of);
    Place(key, h);
    ++size_;
  }

  // Sizes the array for n keys at most 3/4 full (no effect when it already is).
  template <typename KeyOf>
  void Reserve(size_t n, const KeyOf& key_of) {
    if (4 * n > 3 * slots_.size()) Rehash(n + n / 3 + 1, key_of);
  }

  // Removes key. REQUIRES: key present, and key_of still answers for every indexed handle.
  template <typename KeyOf>
  void Erase(uint64_t key, const KeyOf& key_of) {
    const uint64_t hash = FibonacciHash(key);
    size_t hole = Home(hash);
    while (tags_[hole] != Tag(hash) || key_of(slots_[hole]) != key) hole = Next(hole);
    // Backward shift: move up each later entry of the run whose home does not lie
    // cyclically in (hole, j], so every entry stays reachable from its home.
    for (size_t j = Next(hole); tags_[j] != kEmpty; j = Next(j)) {
      const size_t home = Home(FibonacciHash(key_of(slots_[j])));
      const bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      tags_[hole] = tags_[j];
      hole = j;
    }
    tags_[hole] = kEmpty;
    --size_;
  }

  // Empties the table and frees its arrays.
  void Clear() {
    HugeVector<uint32_t>().swap(slots_);
    HugeVector<uint8_t>().swap(tags_);
    size_ = 0;
  }

  // Calls visit(handle) for every indexed handle, in table order.
  template <typename F>
  void ForEach(F&& visit) const {
    for (size_t i = 0; i < tags_.size(); ++i) {
      if (tags_[i] != kEmpty) visit(slots_[i]);
    }
  }

  size_t size() const { return size_; }
  size_t bytes() const { return slots_.capacity() * sizeof(uint32_t) + tags_.capacity(); }

 private:
  static constexpr uint8_t kEmpty = 0;

  // The hash scaled to the array's size picks the home slot (its top bits decide); bits
  // 24..31 give the tag (never kEmpty).
  size_t Home(uint64_t hash) const {
    return static_cast<size_t>((static_cast<unsigned __int128>(hash) * slots_.size()) >> 64);
  }
  static uint8_t Tag(uint64_t hash) {
    const auto t = static_cast<uint8_t>(hash >> 24);
    return t == kEmpty ? 1 : t;
  }
  size_t Next(size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }

  void Place(uint64_t key, uint32_t h) {
    const uint64_t hash = FibonacciHash(key);
    size_t i = Home(hash);
    while (tags_[i] != kEmpty) i = Next(i);
    slots_[i] = h;
    tags_[i] = Tag(hash);
  }

  template <typename KeyOf>
  void Grow(const KeyOf& key_of) {
    Rehash(slots_.empty() ? 16 : 2 * slots_.size(), key_of);
  }

  template <typename KeyOf>
  void Rehash(size_t n, const KeyOf& key_of) {
    HugeVector<uint32_t> old_slots;
    HugeVector<uint8_t> old_tags;
    old_slots.swap(slots_);
    old_tags.swap(tags_);
    slots_.assign(n, kNone);
    tags_.assign(n, kEmpty);
    for (size_t i = 0; i < old_tags.size(); ++i) {
      if (old_tags[i] != kEmpty) Place(key_of(old_slots[i]), old_slots[i]);
    }
  }

  HugeVector<uint32_t> slots_;  // a handle where tags_ is not kEmpty
  HugeVector<uint8_t> tags_;
  size_t size_ = 0;
};

}  // namespace strata
