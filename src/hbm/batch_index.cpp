// BatchIndex: dedup of a batch's keys with a scratch open-addressing map.
#include "hbm/batch_index.h"

#include <string>

namespace strata {

Status BatchIndex::Build(const Batch& batch, const std::function<uint8_t*(uint64_t)>& find) {
  const size_t n = batch.keys.size();
  dedup_.Reset(n);
  local_.resize(n);
  keys_.clear();
  counts_.clear();
  rows_.clear();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = batch.keys[i];
    auto [id, fresh] = dedup_.Insert(key);
    if (fresh) {
      uint8_t* row = find(key);
      if (!row) return Status::NotFound("key " + std::to_string(key) + " of the batch is not in the HBM-PS");
      keys_.push_back(key);
      counts_.push_back(0);
      rows_.push_back(row);
    }
    local_[i] = id;
    ++counts_[id];
  }
  return Status::OK();
}

}  // namespace strata
