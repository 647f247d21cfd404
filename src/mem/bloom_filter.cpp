// BloomFilter (src/mem/bloom_filter.h): a chain of doubling Bloom filters.
#include "mem/bloom_filter.h"

#include <algorithm>
#include <cassert>

#include "strata/common/partition.h"

namespace strata::mem_internal {

BloomFilter::BloomFilter(size_t initial_keys, int bits_per_key)
    : bits_per_key_(bits_per_key),
      // ln 2 * bits per key probes minimise the false-positive rate.
      probes_(std::clamp(static_cast<int>(bits_per_key * 0.69), 1, 30)) {
  assert(initial_keys >= 1 && bits_per_key >= 1);
  Filter f;
  f.capacity = initial_keys;
  f.words.assign((initial_keys * static_cast<size_t>(bits_per_key) + 63) / 64, 0);
  filters_.push_back(std::move(f));
}

void BloomFilter::Grow() {
  Filter f;
  f.capacity = filters_.back().capacity * 2;
  f.words.assign((f.capacity * static_cast<size_t>(bits_per_key_) + 63) / 64, 0);
  filters_.push_back(std::move(f));
}

void BloomFilter::Add(uint64_t key) {
  if (filters_.back().count >= filters_.back().capacity) Grow();
  Filter& f = filters_.back();
  const uint64_t h = Mix64(key ^ 0x6a09e667f3bcc909ULL);
  const uint64_t bits = f.words.size() * 64;
  uint64_t a = h, b = (h >> 32) | 1;
  for (int i = 0; i < probes_; ++i, a += b) {
    const uint64_t bit = a % bits;
    f.words[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  ++f.count;
  ++added_;
}

bool BloomFilter::MayContain(uint64_t key) const {
  const uint64_t h = Mix64(key ^ 0x6a09e667f3bcc909ULL);
  for (const Filter& f : filters_) {
    if (f.count == 0) continue;
    const uint64_t bits = f.words.size() * 64;
    uint64_t a = h, b = (h >> 32) | 1;
    bool all = true;
    for (int i = 0; i < probes_ && all; ++i, a += b) {
      const uint64_t bit = a % bits;
      all = (f.words[bit / 64] >> (bit % 64)) & 1;
    }
    if (all) return true;
  }
  return false;
}

size_t BloomFilter::memory_bytes() const {
  size_t bytes = 0;
  for (const Filter& f : filters_) bytes += f.words.size() * sizeof(uint64_t);
  return bytes;
}

}  // namespace strata::mem_internal
