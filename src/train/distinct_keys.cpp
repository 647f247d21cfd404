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

// The parts' keys, as one sequence, bucketed by their top byte into *bucketed, each
// bucket's keys in sequence order; *start gets where each bucket begins (and, last, the
// end). The parts count their buckets and then scatter, each from its own offsets, side by
// side.
void BucketByTopByte(const std::vector<std::span<const uint64_t>>& parts, ThreadPool* pool,
                     std::vector<uint64_t>* bucketed, std::array<size_t, kBuckets + 1>* start) {
  std::vector<BucketCounts> at(parts.size(), BucketCounts{});  // a part's counts, then its next slots
  ParallelFor(pool, parts.size(), [&](size_t p) {
    for (uint64_t k : parts[p]) ++at[p][k >> 56];
  });
  size_t offset = 0;
  for (int b = 0; b < kBuckets; ++b) {
    (*start)[b] = offset;
    for (BucketCounts& part : at) offset += std::exchange(part[b], offset);
  }
  (*start)[kBuckets] = offset;
  bucketed->resize(offset);
  ParallelFor(pool, parts.size(), [&](size_t p) {
    for (uint64_t k : parts[p]) (*bucketed)[at[p][k >> 56]++] = k;
  });
}

}  // namespace

void SortDistinct(const std::vector<std::span<const uint64_t>>& parts, std::vector<uint64_t>* keys,
                  std::vector<uint32_t>* counts, ThreadPool* pool) {
  std::array<size_t, kBuckets + 1> start;
  std::vector<uint64_t> bucketed;
  BucketByTopByte(parts, pool, &bucketed, &start);

  // Each bucket in place: its distinct keys at its front, their counts beside them.
  std::vector<uint32_t> runs(counts != nullptr ? bucketed.size() : 0);
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

void SortDistinct(std::vector<uint64_t>* keys, std::vector<uint32_t>* counts, ThreadPool* pool) {
  constexpr size_t kKeysAPart = size_t{1} << 18;
  std::vector<std::span<const uint64_t>> parts;
  for (size_t at = 0; at < keys->size(); at += kKeysAPart) {
    parts.emplace_back(keys->data() + at, std::min(kKeysAPart, keys->size() - at));
  }
  std::vector<uint64_t> distinct;
  SortDistinct(parts, &distinct, counts, pool);
  *keys = std::move(distinct);
}

}  // namespace strata
