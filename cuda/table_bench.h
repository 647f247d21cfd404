// Host-callable benchmark of one GPU hash table (cuda/hash_table.cuh) on the current GPU,
// for plain C++ drivers: a plain header with no CUDA includes (include it by path; link
// needs a build with STRATA_WITH_CUDA). It inserts `keys` distinct random keys with
// value_floats-float values into fresh tables (timed), then times bulk finds (resolve + copy the values out) and
// bulk accumulates (atomic adds into the values) of all keys in shuffled order, and a
// device-to-device cudaMemcpy of the same footprint as the GPU's copy bandwidth, all with
// CUDA events in one run. It checks its own result: after the accumulate rounds every
// value must equal the number of rounds (Corruption otherwise).
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/common/status.h"

namespace strata::gpu {

struct TableBenchResult {
  double insert_keys_per_s = 0;  // into an empty table sized for the keys
  double find_keys_per_s = 0;
  double accumulate_keys_per_s = 0;
  // Bytes a key's operation must move at least, per second: find reads the query key and
  // the value and writes the value out (8 + 8 * value_floats bytes); accumulate reads the
  // query key, the delta and the value and writes the value (8 + 12 * value_floats bytes).
  double find_gbps = 0;
  double accumulate_gbps = 0;
  double copy_gbps = 0;  // cudaMemcpy device to device, bytes read + written per second
};

// REQUIRES: keys >= 1, value_floats >= 1, rounds >= 1.
Status RunTableBench(size_t keys, int value_floats, int rounds, uint64_t seed, TableBenchResult* out);

}  // namespace strata::gpu
