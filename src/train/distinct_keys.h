// SortDistinct: a pass's keys (each repeated many times) made into its sorted distinct
// keys, with the number of times each occurred when asked. A pass of Criteo's 131072
// examples holds 3.4M keys; sorting them in one array was the largest single cost of the
// Read stage. Keys are first bucketed by their top byte (the slot: strata/common/partition.h
// SlotKey), parts of them (a pass's batches) side by side; each bucket's keys are counted in a hash table and
// only its distinct keys sorted, buckets on the pool's threads when one is given. The
// result is exactly std::sort + std::unique (and run lengths) of the input, whatever the
// threads. Thread safety: the caller owns the vectors; pool runs one ParallelFor at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/common/thread_pool.h"

namespace strata {

// *keys becomes its distinct values in ascending order; when counts is not null, (*counts)[i]
// is how often (*keys)[i] occurred. pool may be null (the calling thread sorts).
void SortDistinct(std::vector<uint64_t>* keys, std::vector<uint32_t>* counts, ThreadPool* pool);
// The same of the parts' keys taken as one sequence (a pass's batches, read where they
// are), into *keys.
void SortDistinct(const std::vector<std::span<const uint64_t>>& parts, std::vector<uint64_t>* keys,
                  std::vector<uint32_t>* counts, ThreadPool* pool);

}  // namespace strata
