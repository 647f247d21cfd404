// Bucket function of the GPU hash table (cuda/hash_table.cuh). A plain header with no CUDA
// includes, so host code (tests that build adversarial keys all landing in one bucket)
// computes exactly the buckets the device computes.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STRATA_TABLE_HD __host__ __device__
#else
#define STRATA_TABLE_HD
#endif

namespace strata::gpu {

// Slots hold this value when free; a real key equal to it lives in a dedicated side slot.
inline constexpr uint64_t kEmptyKey = ~0ULL;

// murmur3's 64-bit finalizer: a different function from partition.h's splitmix, so the
// bucket of a key is uncorrelated with its device shard. The bucket is TableHash & mask.
STRATA_TABLE_HD inline uint64_t TableHash(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  return key ^ (key >> 33);
}

}  // namespace strata::gpu
