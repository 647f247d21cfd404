// BloomFilter (strata/mem/bloom_filter.h): no false negatives as the chain of filters grows,
// and a bounded false-positive rate on keys it was never given (10 bits a key: about 1.5%
// for the first, blocked filter and half as much for each next one, about 3% in all,
// where a chain of equal filters gave 7%); its memory follows the keys added.
#include <doctest/doctest.h>

#include <cstdint>

#include "strata/mem/bloom_filter.h"

namespace strata {
namespace {

TEST_CASE("mem: bloom filter has no false negatives and about 1% false positives through growth") {
  BloomFilter bloom(1000, 10);
  constexpr uint64_t kAdded = 200000;  // 200x the first filter: a chain of 8
  for (uint64_t k = 0; k < kAdded; ++k) bloom.Add(k * 2);  // even keys
  CHECK(bloom.keys_added() == kAdded);
  uint64_t missing = 0, false_positives = 0;
  for (uint64_t k = 0; k < kAdded; ++k) {
    missing += !bloom.MayContain(k * 2);
    false_positives += bloom.MayContain(k * 2 + 1);
  }
  CHECK(missing == 0);
  const double rate = static_cast<double>(false_positives) / kAdded;
  MESSAGE("false-positive rate ", rate);
  CHECK(rate < 0.035);
  // Filters are sized for 1000, 2000, ... keys at 10 bits: about twice the keys' bits.
  CHECK(bloom.memory_bytes() < kAdded * 10 / 8 * 3);
}

}  // namespace
}  // namespace strata
