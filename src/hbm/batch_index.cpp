// BatchIndex: dedup of a batch's keys with a scratch open-addressing map.
#include "hbm/batch_index.h"

namespace strata {

void BatchIndex::Build(const Batch& batch) {
  const size_t n = batch.keys.size();
  dedup_.Reset(n);
  local_.resize(n);
  keys_.clear();
  counts_.clear();
  constexpr size_t kAhead = 16;  // keys between a probe's prefetch and its use
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) dedup_.Prefetch(batch.keys[i + kAhead]);
    const uint64_t key = batch.keys[i];
    auto [id, fresh] = dedup_.Insert(key);
    if (fresh) {
      keys_.push_back(key);
      counts_.push_back(0);
    }
    local_[i] = id;
    ++counts_[id];
  }
}

}  // namespace strata
