// BatchIndex: the prebuilt gather index of one mini-batch (GeePS-style). It maps every key
// occurrence of the batch to a dense local id, lists the distinct keys in first-seen order
// with their occurrence counts, and resolves each distinct key's row once, so gather/pool
// and scatter-accumulate touch the hash table once per distinct key, not per occurrence.
// One BatchIndex per worker; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strata/common/key_index.h"
#include "strata/common/status.h"
#include "strata/data/batch.h"

namespace strata {

class BatchIndex {
 public:
  // find(key) returns the key's row or null. NotFound names a key missing from the table.
  Status Build(const Batch& batch, const std::function<uint8_t*(uint64_t)>& find);

  const std::vector<uint32_t>& local_ids() const { return local_; }  // per occurrence
  const std::vector<uint64_t>& keys() const { return keys_; }        // distinct
  const std::vector<uint32_t>& counts() const { return counts_; }
  const std::vector<uint8_t*>& rows() const { return rows_; }

 private:
  std::vector<uint32_t> local_;
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> counts_;
  std::vector<uint8_t*> rows_;
  KeyIndex dedup_;
};

}  // namespace strata
