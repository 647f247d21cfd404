// SortDistinct (distinct_keys.h): bucket by the top byte, count each bucket's keys in a hash
// table and sort the distinct ones, then close the gaps between buckets in bucket order.
#include "train/distinct_keys.h"

#include <algorithm>
#include <array>
#include <utility>

#include "strata/common/key_index.h"

namespace strata {

namespace {

// [first, last) becomes its distinct keys, ascending, at its front (returns how many), with
// each one's occurrences in runs[i] when runs is not null. A pass holds each key several
// times: the keys are counted in a hash table first, so only the distinct ones are sorted.
size_t DistinctInPlace(uint64_t* first, uint64_t* last, uint32_t* runs) {
  const size_t n = static_cast<size_t>(last - first);
  if (n == 0) return 0;
  KeyIndex ids;
  ids.Reset(n);
  std::vector<std::pair<uint64_t, uint32_t>> found;  // (key, occurrences) in first-seen order
  for (const uint64_t* p = first; p != last; ++p) {
    const auto [id, fresh] = ids.Insert(*p);
    if (fresh) found.emplace_back(*p, 0);
    ++found[id].second;
  }
  std::sort(found.begin(), found.end());
  for (size_t i = 0; i < found.size(); ++i) {
    first[i] = found[i].first;
    if (runs != nullptr) runs[i] = found[i].second;
  }
  return found.size();
}

}  // namespace

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
    distinct[b] = DistinctInPlace(bucketed.data() + start[b], bucketed.data() + start[b + 1],
                                  counts != nullptr ? runs.data() + start[b] : nullptr);
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
