// GroupRecords: one counting sort of a call's records by bucket (a store's shard or stripe,
// an index block), each group in the call's order, so that a store takes each bucket's lock
// once, a walk reads each bucket's records in sequence, and the order does not depend on
// how the buckets are spread over threads. KeyGroups / GroupKeys: the same for key
// positions. Pure; thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

// (*out)[begin[b] .. begin[b + 1]) are record_of(i) for the i < n with bucket_of(i) == b
// (< buckets), in i's order; returns begin (buckets + 1).
template <typename Record, typename BucketOf, typename RecordOf>
std::vector<uint32_t> GroupRecords(size_t n, size_t buckets, const BucketOf& bucket_of, const RecordOf& record_of,
                                   std::vector<Record>* out) {
  assert(n <= UINT32_MAX);
  std::vector<uint32_t> begin(buckets + 1, 0);
  std::vector<uint32_t> bucket(n);
  for (size_t i = 0; i < n; ++i) {
    bucket[i] = static_cast<uint32_t>(bucket_of(i));
    ++begin[bucket[i] + 1];
  }
  for (size_t b = 0; b < buckets; ++b) begin[b + 1] += begin[b];
  out->resize(n);
  std::vector<uint32_t> at(begin.begin(), begin.end() - 1);
  for (size_t i = 0; i < n; ++i) (*out)[at[bucket[i]]++] = record_of(i);
  return begin;
}

struct KeyGroups {
  std::vector<uint32_t> order;  // order[begin[b] .. begin[b + 1]) are bucket b's positions
  std::vector<uint32_t> begin;  // (buckets + 1)
};

// Groups keys (n) into `buckets` by bucket_of(key) (< buckets).
template <typename BucketOf>
KeyGroups GroupKeys(const uint64_t* keys, size_t n, size_t buckets, const BucketOf& bucket_of) {
  KeyGroups g;
  g.begin = GroupRecords(
      n, buckets, [&](size_t i) { return bucket_of(keys[i]); }, [](size_t i) { return static_cast<uint32_t>(i); },
      &g.order);
  return g;
}

}  // namespace strata
