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

constexpr int kBuckets = 256;
using BucketCounts = std::array<size_t, kBuckets>;

// keys bucketed by their top byte into *bucketed, each bucket's keys in input order; *start
// gets where each bucket begins (and, last, the end). The keys are cut into parts that count
// their buckets and then scatter, each from its own offsets, side by side.
void BucketByTopByte(const std::vector<uint64_t>& keys, ThreadPool* pool, std::vector<uint64_t>* bucketed,
                     std::array<size_t, kBuckets + 1>* start) {
  constexpr size_t kKeysAPart = size_t{1} << 18;
  const size_t n = keys.size();
  const size_t parts = std::max<size_t>(1, (n + kKeysAPart - 1) / kKeysAPart);
  const auto range = [&](size_t p) { return std::pair{n * p / parts, n * (p + 1) / parts}; };
  std::vector<BucketCounts> at(parts, BucketCounts{});  // a part's counts, then its next slots
  ParallelFor(pool, parts, [&](size_t p) {
    const auto [begin, end] = range(p);
    for (size_t i = begin; i < end; ++i) ++at[p][keys[i] >> 56];
  });
  size_t offset = 0;
  for (int b = 0; b < kBuckets; ++b) {
    (*start)[b] = offset;
    for (BucketCounts& part : at) offset += std::exchange(part[b], offset);
  }
  (*start)[kBuckets] = offset;
  bucketed->resize(n);
  ParallelFor(pool, parts, [&](size_t p) {
    const auto [begin, end] = range(p);
    for (size_t i = begin; i < end; ++i) (*bucketed)[at[p][keys[i] >> 56]++] = keys[i];
  });
}

}  // namespace

void SortDistinct(std::vector<uint64_t>* keys, std::vector<uint32_t>* counts, ThreadPool* pool) {
  std::array<size_t, kBuckets + 1> start;
  std::vector<uint64_t> bucketed;
  BucketByTopByte(*keys, pool, &bucketed, &start);

  // Each bucket in place: its distinct keys at its front, their counts beside them.
  std::vector<uint32_t> runs(counts != nullptr ? keys->size() : 0);
  std::array<size_t, kBuckets> distinct{};
  const auto sort_bucket = [&](size_t b) {
    distinct[b] = DistinctInPlace(bucketed.data() + start[b], bucketed.data() + start[b + 1],
                                  counts != nullptr ? runs.data() + start[b] : nullptr);
  };
  ParallelFor(pool, kBuckets, sort_bucket);

  keys->clear();
  if (counts != nullptr) counts->clear();
  for (int b = 0; b < kBuckets; ++b) {
    keys->insert(keys->end(), bucketed.begin() + start[b], bucketed.begin() + start[b] + distinct[b]);
    if (counts != nullptr) counts->insert(counts->end(), runs.begin() + start[b], runs.begin() + start[b] + distinct[b]);
  }
}

}  // namespace strata
