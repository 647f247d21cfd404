// HostTable: linear-probing table over an arena of key-and-row entries.
#include "hbm/host_table.h"

#include <string>

namespace strata {

void HostTable::Reset(size_t max_keys) {
  size_t cap = 16;
  while (cap < 2 * max_keys) cap <<= 1;
  max_keys_ = max_keys;
  size_ = 0;
  slots_.assign(cap, kEmpty);
  arena_.clear();
  arena_.reserve(max_keys * entry_bytes_);
}

Status HostTable::Insert(uint64_t key, const uint8_t* row) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == kEmpty) {
      if (size_ >= max_keys_) {
        return Status::ResourceExhausted("HBM-PS shard full: " + std::to_string(max_keys_) +
                                         " keys planned for this pass, one more inserted");
      }
      slots_[i] = static_cast<uint32_t>(size_++);
      const auto* key_bytes = reinterpret_cast<const uint8_t*>(&key);
      arena_.insert(arena_.end(), key_bytes, key_bytes + sizeof(key));
      arena_.insert(arena_.end(), row, row + row_bytes_);
      return Status::OK();
    }
    if (KeyAt(slots_[i]) == key) {
      std::memcpy(Entry(slots_[i]) + sizeof(uint64_t), row, row_bytes_);
      return Status::OK();
    }
  }
}

}  // namespace strata
