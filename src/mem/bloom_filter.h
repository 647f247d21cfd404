// BloomFilter: the MEM-PS fast path for keys the backing store has never been given. A
// scalable Bloom filter: a chain of fixed filters, each twice the previous one's size, a new
// one started when the last reaches its design count, so the false-positive rate stays near
// the design rate (about 1% at 10 bits per key) however many keys arrive. Never a false
// negative. Keys are hashed once with Mix64 and probed by double hashing.
// Thread safety: none; the cache keeps one filter per lock stripe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::mem_internal {

class BloomFilter {
 public:
  // REQUIRES: initial_keys >= 1, bits_per_key >= 1.
  BloomFilter(size_t initial_keys, int bits_per_key);

  void Add(uint64_t key);
  bool MayContain(uint64_t key) const;

  size_t keys_added() const { return added_; }
  size_t memory_bytes() const;

 private:
  struct Filter {
    std::vector<uint64_t> words;
    size_t capacity = 0;  // keys it was sized for
    size_t count = 0;
  };
  void Grow();

  int bits_per_key_;
  int probes_;
  size_t added_ = 0;
  std::vector<Filter> filters_;
};

}  // namespace strata::mem_internal
