// BloomFilter (strata/mem/bloom_filter.h): a chain of doubling Bloom filters.
#include "strata/mem/bloom_filter.h"

#include <algorithm>
#include <cassert>

#include "strata/common/partition.h"
#include "strata/common/prefetch.h"

namespace strata {

BloomFilter::BloomFilter(size_t initial_keys, int bits_per_key) : bits_per_key_(bits_per_key) {
  assert(initial_keys >= 1 && bits_per_key >= 1);
  AddFilter(initial_keys);
}

void BloomFilter::AddFilter(size_t capacity) {
  const double bits_per_key = bits_per_key_ + 1.44 * static_cast<double>(filters_.size());
  Filter f;
  f.capacity = capacity;
  f.blocks.resize(static_cast<size_t>(static_cast<double>(capacity) * bits_per_key / 512) + 1);
  // ln 2 * bits per key probes minimise the false-positive rate.
  f.probes = std::clamp(static_cast<int>(bits_per_key * 0.69 + 0.5), 1, 30);
  filters_.push_back(std::move(f));
}

namespace {

uint64_t KeyHash(uint64_t key) { return Mix64(key ^ 0x6a09e667f3bcc909ULL); }

}  // namespace

void BloomFilter::Add(uint64_t key) {
  if (filters_.back().count >= filters_.back().capacity) AddFilter(filters_.back().capacity * 2);
  Filter& f = filters_.back();
  const uint64_t h = KeyHash(key);
  Block& block = f.blocks[BlockIndex(f, h)];
  uint32_t a = static_cast<uint32_t>(h), b = (a >> 16) | 1;
  for (int i = 0; i < f.probes; ++i, a += b) block.words[(a >> 6) & 7] |= uint64_t{1} << (a & 63);
  ++f.count;
  ++added_;
}

void BloomFilter::Prefetch(uint64_t key) const {
  const uint64_t h = KeyHash(key);
  for (const Filter& f : filters_) PrefetchLine(&f.blocks[BlockIndex(f, h)]);
}

// The chain's blocks are fetched together first: a key absent from all of them (most
// lookups) costs about one cache miss, not one a filter.
bool BloomFilter::MayContain(uint64_t key) const {
  Prefetch(key);
  const uint64_t h = KeyHash(key);
  for (const Filter& f : filters_) {
    if (f.count == 0) continue;
    const Block& block = f.blocks[BlockIndex(f, h)];
    uint32_t a = static_cast<uint32_t>(h), b = (a >> 16) | 1;
    bool all = true;
    for (int i = 0; i < f.probes && all; ++i, a += b) all = (block.words[(a >> 6) & 7] >> (a & 63)) & 1;
    if (all) return true;
  }
  return false;
}

size_t BloomFilter::memory_bytes() const {
  size_t bytes = 0;
  for (const Filter& f : filters_) bytes += f.blocks.size() * sizeof(Block);
  return bytes;
}

}  // namespace strata
