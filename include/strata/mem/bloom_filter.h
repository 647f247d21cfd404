// BloomFilter: a scalable Bloom filter, a chain of fixed filters, each for twice the keys
// of the previous one, a new one started when the last reaches its design count. A key's
// false-positive rate is the sum over the chain, so each filter gets 1.44 more bits a key
// (and one more probe) than the previous one, which halves its rate: the sum stays under
// twice the first filter's (about 1% at 10 bits a key), however many keys arrive. Never a
// false negative. Each filter is blocked: a key's bits all lie in one 64-byte block (one
// cache miss a filter, where spread bits cost one a probe), picked by the top half of the
// key's Mix64; the low half places the bits in the block by double hashing. The MEM-PS
// keeps one of the keys it gave the backing store (never-seen keys skip it); CachePolicy
// keeps one a pass for the keys pinned while not cached.
// Thread safety: none; each owner guards its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/common/huge_pages.h"

namespace strata {

class BloomFilter {
 public:
  // REQUIRES: initial_keys >= 1, bits_per_key >= 1.
  BloomFilter(size_t initial_keys, int bits_per_key);

  void Add(uint64_t key);
  bool MayContain(uint64_t key) const;
  // Starts loading the blocks MayContain(key) and Add(key) read (prefetch a few keys ahead).
  void Prefetch(uint64_t key) const;

  size_t keys_added() const { return added_; }
  size_t memory_bytes() const;

 private:
  struct alignas(64) Block {
    uint64_t words[8] = {};
  };
  struct Filter {
    HugeVector<Block> blocks;
    size_t capacity = 0;  // keys it was sized for
    size_t count = 0;
    int probes = 0;
  };
  void AddFilter(size_t capacity);
  // The index of the block of f that holds hash's bits.
  static size_t BlockIndex(const Filter& f, uint64_t hash) { return ((hash >> 32) * f.blocks.size()) >> 32; }

  int bits_per_key_;  // of the first filter
  size_t added_ = 0;
  std::vector<Filter> filters_;
};

}  // namespace strata
