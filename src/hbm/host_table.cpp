// HostTable: linear-probing table over a row arena.
#include "hbm/host_table.h"

#include <cstring>
#include <string>

namespace strata {

void HostTable::Reset(size_t max_keys) {
  size_t cap = 16;
  while (cap < 2 * max_keys) cap <<= 1;
  max_keys_ = max_keys;
  slots_.assign(cap, kEmpty);
  keys_.clear();
  keys_.reserve(max_keys);
  arena_.clear();
  arena_.reserve(max_keys * row_bytes_);
}

Status HostTable::Insert(uint64_t key, const uint8_t* row) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == kEmpty) {
      if (keys_.size() >= max_keys_) {
        return Status::ResourceExhausted("HBM-PS shard full: " + std::to_string(max_keys_) +
                                         " keys planned for this pass, one more inserted");
      }
      slots_[i] = static_cast<uint32_t>(keys_.size());
      keys_.push_back(key);
      arena_.insert(arena_.end(), row, row + row_bytes_);
      return Status::OK();
    }
    if (keys_[slots_[i]] == key) {
      std::memcpy(&arena_[static_cast<size_t>(slots_[i]) * row_bytes_], row, row_bytes_);
      return Status::OK();
    }
  }
}

}  // namespace strata
