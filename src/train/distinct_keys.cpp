// SortDistinct (distinct_keys.h): bucket by the top byte, sort and run-length each bucket,
// then close the gaps between buckets in bucket order.
#include "train/distinct_keys.h"

#include <algorithm>
#include <array>

namespace strata {

void SortDistinct(std::vector<uint64_t>* keys, std::vector<uint32_t>* counts, ThreadPool* pool) {
  constexpr int kBuckets = 256;
  std::array<size_t, kBuckets + 1> start{};
  for (uint64_t k : *keys) ++start[(k >> 56) + 1];
  for (int b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  std::vector<uint64_t> bucketed(keys->size());
  std::array<size_t, kBuckets> fill;
  std::copy(start.begin(), start.end() - 1, fill.begin());
  for (uint64_t k : *keys) bucketed[fill[k >> 56]++] = k;

  // Each bucket in place: its distinct keys at its front, their counts beside them.
  std::vector<uint32_t> runs(counts != nullptr ? keys->size() : 0);
  std::array<size_t, kBuckets> distinct{};
  const auto sort_bucket = [&](size_t b) {
    uint64_t* first = bucketed.data() + start[b];
    uint64_t* last = bucketed.data() + start[b + 1];
    std::sort(first, last);
    size_t n = 0;
    for (uint64_t* p = first; p != last; ++n) {
      uint64_t* q = p + 1;
      while (q != last && *q == *p) ++q;
      first[n] = *p;
      if (counts != nullptr) runs[start[b] + n] = static_cast<uint32_t>(q - p);
      p = q;
    }
    distinct[b] = n;
  };
  if (pool != nullptr && pool->size() > 1) {
    pool->ParallelFor(kBuckets, sort_bucket);
  } else {
    for (size_t b = 0; b < kBuckets; ++b) sort_bucket(b);
  }

  keys->clear();
  if (counts != nullptr) counts->clear();
  for (int b = 0; b < kBuckets; ++b) {
    keys->insert(keys->end(), bucketed.begin() + start[b], bucketed.begin() + start[b] + distinct[b]);
    if (counts != nullptr) counts->insert(counts->end(), runs.begin() + start[b], runs.begin() + start[b] + distinct[b]);
  }
}

}  // namespace strata
