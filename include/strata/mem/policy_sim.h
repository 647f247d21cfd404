// Cache policy replay: runs a key trace through the MEM-PS policy (the CachePolicy class
// the cache itself runs), plain LRU, Belady's offline optimum and a frequency oracle, all
// at the same capacity in rows, and counts hits. tools/bench/cache_sim drives it.
//
// What an access is. The trainer pulls a pass's working set (the union of its keys) once,
// before the pass trains, so by default a trace holds one access per distinct key per pass,
// in order of first use within the pass, weighted by how many examples of the pass touch the
// key. Per-example traces (one access per key occurrence, weight 1) are the alternative.
//
// The simulated MEM-PS is driven as the trainer drives the cache: each pass's working set is
// pinned before the pass is pulled, and so is the working set of the `lookahead` passes after
// it (the trainer reads one pass beyond its newest pull and announces its keys: lookahead 1).
// It is held to exactly `capacity` rows like the other policies, so when the pinned sets
// exceed the capacity it evicts pinned rows too, farthest next use first (the real cache
// keeps them and goes over its budget instead). Its frequency is the row's counter (examples
// that touched the key so far, this access included; the backing store keeps it across
// evictions) or, with FreqSource::kPassCount, the passes that touched the row while cached.
// Belady may bypass: on a miss the new key itself is evicted when its next use is farthest,
// which makes it the true optimum of this hit count (tested against exhaustive search).
// Pure functions of their arguments; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace strata {

struct KeyTrace {
  std::vector<uint64_t> keys;      // (accesses)
  std::vector<uint32_t> weights;   // (accesses) examples behind each access, >= 1
  std::vector<size_t> pass_begin;  // (passes + 1) first access of each pass, then accesses

  size_t accesses() const { return keys.size(); }
  size_t passes() const { return pass_begin.empty() ? 0 : pass_begin.size() - 1; }
  size_t DistinctKeys() const;
};

// Builds a KeyTrace example by example. Not thread-safe.
class KeyTraceBuilder {
 public:
  // per_example: one access per key occurrence instead of one per distinct key per pass.
  explicit KeyTraceBuilder(bool per_example);

  // keys: (n) the sparse keys of one example.
  void AddExample(const uint64_t* keys, size_t n);
  // Closes the current pass; an empty pass is dropped.
  void EndPass();
  // Closes the last pass and hands the trace over; the builder is then empty.
  KeyTrace Finish();

 private:
  bool per_example_;
  KeyTrace trace_;
  std::unordered_map<uint64_t, size_t> in_pass_;  // key -> its access in the current pass
};

enum class FreqSource { kRowCounter, kPassCount };

struct SimResult {
  uint64_t accesses = 0;
  uint64_t hits = 0;
  double hit_rate() const { return accesses ? double(hits) / double(accesses) : 0; }
};

// lookahead >= 0 (0: only the pass being pulled is known).
SimResult SimulateMemPs(const KeyTrace& trace, size_t capacity, FreqSource freq, int lookahead = 1);
SimResult SimulateLru(const KeyTrace& trace, size_t capacity);
SimResult SimulateBelady(const KeyTrace& trace, size_t capacity);
// Keeps, from their first access on, the `capacity` keys accessed most often in the whole
// trace: the best any policy ranking keys by frequency alone can do, a reference showing
// how much of Belady's margin comes from knowing when (not how often) keys return.
SimResult SimulateFrequencyOracle(const KeyTrace& trace, size_t capacity);

}  // namespace strata
