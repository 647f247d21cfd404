// HostTable: linear-probing table over an arena of key-and-row entries.
#include "hbm/host_table.h"

#include <algorithm>
#include <string>

namespace strata {

namespace {

// Slots for max_keys keys at load factor <= 0.5: a power of two, 16 at least.
size_t SlotsFor(size_t max_keys) {
  size_t cap = 16;
  while (cap < 2 * max_keys) cap <<= 1;
  return cap;
}

}  // namespace

void HostTable::Reserve(size_t max_keys) {
  const size_t cap = SlotsFor(max_keys), bytes = max_keys * entry_bytes_;
  if (slots_.size() >= cap && arena_.size() >= bytes) return;  // room enough: the rows stay
  size_ = 0;
  slots_.assign(std::max(cap, slots_.size()), kEmpty);
  if (arena_.size() >= bytes) return;
  arena_.clear();  // nothing to keep: a growth copies nothing
  arena_.resize(bytes);
}

void HostTable::Reset(size_t max_keys) {
  Reserve(max_keys);
  max_keys_ = max_keys;
  size_ = 0;
  slots_.assign(SlotsFor(max_keys), kEmpty);
}

Status HostTable::Insert(uint64_t key, const uint8_t* row) {
  const size_t mask = slots_.size() - 1;
  const uint64_t hash = Hash(key);
  for (size_t i = Home(hash, mask);; i = (i + 1) & mask) {
    if (slots_[i] == kEmpty) {
      if (size_ >= max_keys_) {
        return Status::ResourceExhausted("HBM-PS shard full: " + std::to_string(max_keys_) +
                                         " keys planned for this pass, one more inserted");
      }
      slots_[i] = SlotOf(hash, size_++);
      uint8_t* entry = Entry(slots_[i]);
      std::memcpy(entry, &key, sizeof(key));
      std::memcpy(entry + sizeof(key), row, row_bytes_);
      return Status::OK();
    }
    if (Tag(slots_[i]) == Tag(hash) && KeyAt(slots_[i]) == key) {
      std::memcpy(Entry(slots_[i]) + sizeof(uint64_t), row, row_bytes_);
      return Status::OK();
    }
  }
}

}  // namespace strata
