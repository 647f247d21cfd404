// CountingStore: a test RowStore over the in-memory store that counts, per key, the rows
// Put for it, so a test can check that each row came home exactly once. Not thread-safe
// beyond what the wrapped store allows (Puts serialized, as the ShardServer does).
#pragma once

#include <map>
#include <memory>

#include "strata/store/row_store.h"

namespace strata::test {

class CountingStore : public RowStore {
 public:
  explicit CountingStore(size_t row_bytes) : inner_(NewMemoryRowStore(row_bytes)) {}

  size_t row_bytes() const override { return inner_->row_bytes(); }
  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    return inner_->Get(keys, n, rows, found);
  }
  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    for (size_t i = 0; i < n; ++i) ++puts_[keys[i]];
    return inner_->Put(keys, n, rows);
  }
  Status Erase(const uint64_t* keys, size_t n) override { return inner_->Erase(keys, n); }
  Status Sync() override { return inner_->Sync(); }
  Status Scan(const std::function<void(uint64_t, const uint8_t*)>& visit) override { return inner_->Scan(visit); }
  uint64_t num_keys() const override { return inner_->num_keys(); }
  StoreStats stats() const override { return inner_->stats(); }

  // Rows Put per key since construction or the last ClearCounts.
  const std::map<uint64_t, int>& puts() const { return puts_; }
  void ClearCounts() { puts_.clear(); }

 private:
  std::unique_ptr<RowStore> inner_;
  std::map<uint64_t, int> puts_;
};

}  // namespace strata::test
