// RecordIndex: the SSD-PS DRAM index, key -> record location (segment slot and record
// number), as one open-addressing table of 16-byte (key, location) entries with linear
// probing; it doubles when 80% full. (strata/common/key_index.h's KeyIndex is another
// thing: keys numbered densely.) No deletion: SSD-PS rows are never removed, only
// superseded. The key ~0 (the empty marker) lives in a side slot.
//
// A location packs a segment-table slot (high kSlotBits) and a record number (low bits).
//
// Thread safety: none; SsdStore guards it with its index lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace strata::ssd {

inline constexpr int kSlotBits = 20;
inline constexpr int kRecordBits = 64 - kSlotBits;
inline constexpr uint64_t MakeLocation(uint64_t slot, uint64_t record) {
  return (slot << kRecordBits) | record;
}
inline constexpr uint32_t LocationSlot(uint64_t loc) { return static_cast<uint32_t>(loc >> kRecordBits); }
inline constexpr uint64_t LocationRecord(uint64_t loc) { return loc & ((1ull << kRecordBits) - 1); }

class RecordIndex {
 public:
  RecordIndex() { Rehash(1024); }

  // True and *loc set when present.
  bool Find(uint64_t key, uint64_t* loc) const;
  // Inserts or overwrites; returns true and the previous location in *old when it existed.
  bool Upsert(uint64_t key, uint64_t loc, uint64_t* old);
  // Sets key's location to `to` only if it is currently `from`; returns whether it did.
  bool ReplaceIf(uint64_t key, uint64_t from, uint64_t to);
  // Visits every (key, location).
  void ForEach(const std::function<void(uint64_t key, uint64_t loc)>& fn) const;

  size_t size() const { return size_; }
  size_t bytes() const { return entries_.size() * sizeof(Entry); }

 private:
  struct Entry {
    uint64_t key;
    uint64_t loc;
  };
  static constexpr uint64_t kEmpty = ~0ull;

  size_t Probe(uint64_t key) const;  // slot holding key, or the empty slot where it would go
  void Rehash(size_t capacity);

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;  // including the side slot
  bool has_empty_key_ = false;
  uint64_t empty_key_loc_ = 0;
};

}  // namespace strata::ssd
