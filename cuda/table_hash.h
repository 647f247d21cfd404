// Bucket function of the GPU hash table (cuda/hash_table.cuh). A plain header with no CUDA
// includes, so host code (tests that build adversarial keys all landing in one bucket)
// computes exactly the buckets the device computes.
#pragma once

#include <cstdint>

#include "strata/common/hash.h"

namespace strata::gpu {

// Slots hold this value when free; a real key equal to it lives in a dedicated side slot.
inline constexpr uint64_t kEmptyKey = ~0ULL;

// Fmix64, a different function from the device shard's Mix64, so the bucket of a key is
// uncorrelated with its shard. The bucket is TableHash & mask.
STRATA_HOST_DEVICE inline uint64_t TableHash(uint64_t key) { return Fmix64(key); }

}  // namespace strata::gpu
