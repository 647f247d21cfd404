// KeyGroups: a call's key positions grouped by bucket (a store's shard or stripe) with one
// counting sort, each group in the call's order, so that a store takes each bucket's lock
// once and the walk's order does not depend on how the buckets are spread over threads.
// Pure; thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

struct KeyGroups {
  std::vector<uint32_t> order;  // order[begin[b] .. begin[b + 1]) are bucket b's positions
  std::vector<uint32_t> begin;  // (buckets + 1)
};

// Groups keys (n) into `buckets` by bucket_of(key) (< buckets).
template <typename BucketOf>
KeyGroups GroupKeys(const uint64_t* keys, size_t n, size_t buckets, const BucketOf& bucket_of) {
  assert(n <= UINT32_MAX);
  KeyGroups g;
  g.begin.assign(buckets + 1, 0);
  std::vector<uint32_t> bucket(n);
  for (size_t i = 0; i < n; ++i) {
    bucket[i] = static_cast<uint32_t>(bucket_of(keys[i]));
    ++g.begin[bucket[i] + 1];
  }
  for (size_t b = 0; b < buckets; ++b) g.begin[b + 1] += g.begin[b];
  g.order.resize(n);
  std::vector<uint32_t> at(g.begin.begin(), g.begin.end() - 1);
  for (size_t i = 0; i < n; ++i) g.order[at[bucket[i]]++] = static_cast<uint32_t>(i);
  return g;
}

}  // namespace strata
