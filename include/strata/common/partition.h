// The one partition function: where a key lives. Every tier calls these; nothing else
// decides placement. OwnerRank picks the rank whose MEM-PS/SSD-PS stores the key's row;
// DeviceShard picks the HBM-PS shard inside a rank with an independent hash, so the two
// splits are uncorrelated (keys of one rank still spread over all its devices).
#pragma once

#include <cstdint>

#include "strata/common/hash.h"

namespace strata {

// REQUIRES: ranks >= 1.
inline int OwnerRank(uint64_t key, int ranks) {
  if (ranks == 1) return 0;  // the same, without a hash and a division a key
  return static_cast<int>(Mix64(key) % static_cast<uint64_t>(ranks));
}

// REQUIRES: shards >= 1. Independent of OwnerRank (different salt).
inline int DeviceShard(uint64_t key, int shards) {
  return static_cast<int>(Mix64(key ^ 0x5bd1e9955bd1e995ULL) % static_cast<uint64_t>(shards));
}

// Feature key of (slot, token): the slot in the top byte keeps slots disjoint, the token
// hash fills the rest. Used by the Criteo reader and by strata-datagen alike.
inline uint64_t SlotKey(int slot, uint64_t token) {
  return (static_cast<uint64_t>(slot) << 56) | (Mix64(token) >> 8);
}

inline int SlotOfKey(uint64_t key) { return static_cast<int>(key >> 56); }

// The key of the same token in another slot: WithSlot(SlotKey(s, t), u) == SlotKey(u, t).
inline uint64_t WithSlot(uint64_t key, int slot) {
  return (static_cast<uint64_t>(slot) << 56) | (key & ((uint64_t{1} << 56) - 1));
}

}  // namespace strata
