// RecordIndex: an exact key -> 64-bit value map, one open-addressing table of 16-byte
// (key, value) entries with linear probing that doubles when 80% full. SSD-PS recovery
// uses it for the newest seq of every key while it replays segments, since the DRAM index
// proper (compact_index.h) stores fingerprints, not keys. (strata/common/key_index.h's
// KeyIndex is another thing: keys numbered densely.) No deletion. The key ~0 (the empty
// marker) lives in a side slot.
//
// Thread safety: none; recovery uses it on the opening thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::ssd {

class RecordIndex {
 public:
  RecordIndex() { Rehash(1024); }

  // True and *value set when present.
  bool Find(uint64_t key, uint64_t* value) const;
  // Inserts or overwrites; returns true and the previous value in *old when it existed.
  bool Upsert(uint64_t key, uint64_t value, uint64_t* old);

  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t key;
    uint64_t value;
  };
  static constexpr uint64_t kEmpty = ~0ull;

  size_t Probe(uint64_t key) const;  // slot holding key, or the empty slot where it would go
  void Rehash(size_t capacity);

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;  // including the side slot
  bool has_empty_key_ = false;
  uint64_t empty_key_value_ = 0;
};

}  // namespace strata::ssd
