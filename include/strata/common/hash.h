// The project's hash functions, in one place. Pure functions, identical on every machine
// and (with STRATA_HOST_DEVICE) on the GPU, so host and device compute the same values.
//   Mix64         splitmix64's finalizer: placement (OwnerRank, DeviceShard), seeds, keys.
//   Fmix64        murmur3's 64-bit finalizer: buckets of hash tables whose keys share a
//                 Mix64 residue (a rank's keys, a shard's keys), so buckets stay uniform.
//   FibonacciHash multiply by 2^64 / golden ratio: the cheapest good spread of the high
//                 bits, for tables in per-step hot paths (callers shift the bits they use).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STRATA_HOST_DEVICE __host__ __device__
#else
#define STRATA_HOST_DEVICE
#endif

namespace strata {

STRATA_HOST_DEVICE inline constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

STRATA_HOST_DEVICE inline constexpr uint64_t Fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

STRATA_HOST_DEVICE inline constexpr uint64_t FibonacciHash(uint64_t x) { return x * 0x9e3779b97f4a7c15ULL; }

}  // namespace strata
