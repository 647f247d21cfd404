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
  const size_t bytes = max_keys * entry_bytes_;
  if (arena_.size() >= bytes) return;  // a pass as large ran before: its pages are here
  arena_.clear();  // nothing to keep: a growth copies nothing
  arena_.resize(bytes);
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
      uint8_t* entry = Entry(slots_[i]);
      std::memcpy(entry, &key, sizeof(key));
      std::memcpy(entry + sizeof(key), row, row_bytes_);
      return Status::OK();
    }
    if (KeyAt(slots_[i]) == key) {
      std::memcpy(Entry(slots_[i]) + sizeof(uint64_t), row, row_bytes_);
      return Status::OK();
    }
  }
}

}  // namespace strata
