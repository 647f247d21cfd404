// BatchIndex: the prebuilt gather index of one mini-batch (GeePS-style). It maps every key
// occurrence of the batch to a dense local id and lists the distinct keys in first-seen
// order with their occurrence counts, so that the caller resolves each distinct key's row
// once and gather/pool and scatter-accumulate touch the hash table once per distinct key,
// not per occurrence. One BatchIndex per worker; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/common/key_index.h"
#include "strata/data/batch.h"

namespace strata {

class BatchIndex {
 public:
  void Build(const Batch& batch);

  const std::vector<uint32_t>& local_ids() const { return local_; }  // per occurrence
  const std::vector<uint64_t>& keys() const { return keys_; }        // distinct
  const std::vector<uint32_t>& counts() const { return counts_; }

 private:
  std::vector<uint32_t> local_;
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> counts_;
  KeyIndex dedup_;
};

}  // namespace strata
