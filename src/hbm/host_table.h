// HostTable: one host HBM-PS shard, an open-addressing (linear probing) hash table from
// key to a fixed-size row, rebuilt every pass with a capacity fixed at Reset. Each key is
// stored in the flat arena just before its row, so a lookup misses the cache twice (its
// slot, then its key and row together), not three times. A slot holds 32 bits of its key's
// hash beside the entry's index, so a probe passes another key's slot without reading its
// entry (a pass's stage-in of 385,000 rows took 11-12 ms reading them, 6-7 without). Find
// is safe from many threads while no Insert runs; Insert is single-threaded. A full table
// is an error naming the sizes, never a silent drop.
#pragma once

#include <cstdint>
#include <cstring>

#include "strata/common/hash.h"
#include "strata/common/huge_pages.h"
#include "strata/common/prefetch.h"
#include "strata/common/status.h"

namespace strata {

class HostTable {
 public:
  explicit HostTable(size_t row_bytes) : row_bytes_(row_bytes), entry_bytes_(sizeof(uint64_t) + row_bytes) {}

  // Makes the room a Reset(max_keys) needs: its slots and its rows' room only grow, written
  // (their pages faulted in) when they do, so that a Reset and inserts after it fault no
  // page in. A growth drops every row; otherwise the rows stay.
  void Reserve(size_t max_keys);

  // Drops every row; makes room for at least max_keys keys at load factor <= 0.5 (Reserve).
  void Reset(size_t max_keys);

  // Inserts or overwrites key's row (row_bytes). ResourceExhausted when full.
  Status Insert(uint64_t key, const uint8_t* row);

  // The row of key, or null when absent.
  uint8_t* Find(uint64_t key) {
    const size_t mask = slots_.size() - 1;
    const uint64_t hash = Hash(key);
    for (size_t i = Home(hash, mask);; i = (i + 1) & mask) {
      if (slots_[i] == kEmpty) return nullptr;
      if (Tag(slots_[i]) == Tag(hash) && KeyAt(slots_[i]) == key) return Entry(slots_[i]) + sizeof(uint64_t);
    }
  }

  // A loop over many keys misses the cache twice a Find (slot, then key and row): it calls
  // PrefetchSlot a few keys ahead, then PrefetchRow (which reads the slot) closer in. That
  // loads the whole entry, as the loops that update or copy a row read all of it (on 2
  // ranks a step's row updates found anew took 0.801 s a pass against 0.814 with the key's
  // line alone, 4 alternating rounds; one rank's steps within 0.1%).
  void PrefetchSlot(uint64_t key) const { PrefetchLine(&slots_[Home(Hash(key), slots_.size() - 1)]); }
  void PrefetchRow(uint64_t key) const {
    const uint64_t slot = slots_[Home(Hash(key), slots_.size() - 1)];
    if (slot != kEmpty) PrefetchSpan(&arena_[EntryIndex(slot) * entry_bytes_], entry_bytes_);
  }

  size_t size() const { return size_; }

 private:
  // A slot: its key's tag (the hash's high 32 bits) above the entry's index (a pass's keys
  // number fewer than 2^32 - 1), or kEmpty.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t Hash(uint64_t key) { return FibonacciHash(key); }
  static size_t Home(uint64_t hash, size_t mask) { return (hash >> 17) & mask; }
  static uint32_t Tag(uint64_t hash_or_slot) { return static_cast<uint32_t>(hash_or_slot >> 32); }
  static uint64_t SlotOf(uint64_t hash, size_t entry) { return (hash >> 32 << 32) | entry; }
  static size_t EntryIndex(uint64_t slot) { return static_cast<uint32_t>(slot); }
  uint8_t* Entry(uint64_t slot) { return &arena_[EntryIndex(slot) * entry_bytes_]; }
  uint64_t KeyAt(uint64_t slot) {
    uint64_t key;
    std::memcpy(&key, Entry(slot), sizeof(key));
    return key;
  }

  size_t row_bytes_;
  size_t entry_bytes_;  // the key, then the row
  size_t max_keys_ = 0;
  size_t size_ = 0;
  HugeVector<uint64_t> slots_;  // tag and index of the entry in arena_, or kEmpty
  HugeVector<uint8_t> arena_;   // entries in insertion order: size_ of them, then room
};

}  // namespace strata
