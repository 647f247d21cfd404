// BatchIndex: dedup of a batch's keys with a scratch open-addressing map.
#include "hbm/batch_index.h"

#include <string>

namespace strata {
namespace {
constexpr uint32_t kEmpty = 0xffffffffu;
}

Status BatchIndex::Build(const Batch& batch, const std::function<uint8_t*(uint64_t)>& find) {
  const size_t n = batch.keys.size();
  size_t cap = 64;
  while (cap < 2 * n) cap <<= 1;
  probe_keys_.resize(cap);
  probe_ids_.assign(cap, kEmpty);
  local_.resize(n);
  keys_.clear();
  counts_.clear();
  rows_.clear();
  const size_t mask = cap - 1;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = batch.keys[i];
    size_t s = ((key * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
    while (probe_ids_[s] != kEmpty && probe_keys_[s] != key) s = (s + 1) & mask;
    if (probe_ids_[s] == kEmpty) {
      uint8_t* row = find(key);
      if (!row) return Status::NotFound("key " + std::to_string(key) + " of the batch is not in the HBM-PS");
      probe_keys_[s] = key;
      probe_ids_[s] = static_cast<uint32_t>(keys_.size());
      keys_.push_back(key);
      counts_.push_back(0);
      rows_.push_back(row);
    }
    local_[i] = probe_ids_[s];
    ++counts_[probe_ids_[s]];
  }
  return Status::OK();
}

}  // namespace strata
