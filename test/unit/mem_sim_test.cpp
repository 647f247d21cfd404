// Policy replay: trace building, Belady against the textbook trace and exhaustive search,
// LRU against its textbook count, and the MEM-PS policy (with and without the announced next
// pass) on hand-made and random pass traces.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "strata/mem/policy_sim.h"

namespace strata {
namespace {

KeyTrace OnePass(const std::vector<uint64_t>& keys) {
  KeyTraceBuilder b(/*per_example=*/true);
  for (uint64_t k : keys) b.AddExample(&k, 1);
  return b.Finish();
}

// The most hits any policy can get: tries every choice of what to keep after each access.
uint64_t ExhaustiveOptimum(const std::vector<uint64_t>& t, size_t cap) {
  std::map<std::pair<size_t, std::set<uint64_t>>, uint64_t> memo;
  std::function<uint64_t(size_t, const std::set<uint64_t>&)> best = [&](size_t i, const std::set<uint64_t>& s) -> uint64_t {
    if (i == t.size()) return 0;
    auto key = std::make_pair(i, s);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    const uint64_t hit = s.count(t[i]);
    std::set<uint64_t> with = s;
    with.insert(t[i]);
    uint64_t r = 0;
    if (with.size() <= cap) {
      r = best(i + 1, with);
    } else {
      for (uint64_t v : with) {
        std::set<uint64_t> without = with;
        without.erase(v);
        r = std::max(r, best(i + 1, without));
      }
    }
    return memo[key] = hit + r;
  };
  return best(0, {});
}

TEST_CASE("mem: trace builder keeps one weighted access per distinct key per pass") {
  KeyTraceBuilder b(/*per_example=*/false);
  const uint64_t e1[] = {5, 6}, e2[] = {6, 7}, e3[] = {5};
  b.AddExample(e1, 2);
  b.AddExample(e2, 2);
  b.EndPass();
  b.EndPass();  // empty pass dropped
  b.AddExample(e3, 1);
  KeyTrace t = b.Finish();
  CHECK(t.keys == std::vector<uint64_t>{5, 6, 7, 5});
  CHECK(t.weights == std::vector<uint32_t>{1, 2, 1, 1});
  CHECK(t.pass_begin == std::vector<size_t>{0, 3, 4});
  CHECK(t.passes() == 2);
  CHECK(t.DistinctKeys() == 3);
}

TEST_CASE("mem: Belady and LRU on the textbook reference string") {
  // Silberschatz's string, 3 frames: OPT has 9 faults with demand paging; letting the
  // incoming page be the victim (bypass) saves one more, so 12 of 20 hit. LRU has 12 faults.
  const std::vector<uint64_t> s = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  KeyTrace t = OnePass(s);
  CHECK(SimulateBelady(t, 3).hits == 12);
  CHECK(ExhaustiveOptimum(s, 3) == 12);
  CHECK(SimulateLru(t, 3).hits == 8);
  CHECK(SimulateBelady(t, 0).hits == 0);
  CHECK(SimulateBelady(t, 100).hits == 20 - 6);  // only the 6 first uses miss
}

TEST_CASE("mem: Belady matches exhaustive search and bounds every policy") {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 40; ++round) {
    std::vector<uint64_t> s(10 + rng() % 5);
    const uint64_t keys = 3 + rng() % 3;
    for (uint64_t& k : s) k = rng() % keys;
    const size_t cap = 1 + rng() % 3;
    KeyTrace t = OnePass(s);
    const uint64_t opt = SimulateBelady(t, cap).hits;
    CHECK(opt == ExhaustiveOptimum(s, cap));
    CHECK(SimulateLru(t, cap).hits <= opt);
    CHECK(SimulateMemPs(t, cap, FreqSource::kRowCounter).hits <= opt);
  }
}

TEST_CASE("mem: simulated MEM-PS with lookahead stays below Belady on random pass traces") {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 200; ++round) {
    KeyTraceBuilder b(/*per_example=*/false);
    const int passes = 2 + static_cast<int>(rng() % 6);
    for (int p = 0; p < passes; ++p) {
      const int examples = 1 + static_cast<int>(rng() % 6);
      for (int e = 0; e < examples; ++e) {
        const uint64_t k = rng() % 8;
        b.AddExample(&k, 1);
      }
      b.EndPass();
    }
    KeyTrace t = b.Finish();
    const size_t cap = 1 + rng() % 4;
    const uint64_t opt = SimulateBelady(t, cap).hits;
    for (int lookahead = 0; lookahead <= 3; ++lookahead) {
      CAPTURE(round);
      CAPTURE(lookahead);
      CHECK(SimulateMemPs(t, cap, FreqSource::kRowCounter, lookahead).hits <= opt);
      CHECK(SimulateMemPs(t, cap, FreqSource::kPassCount, lookahead).hits <= opt);
    }
  }
}

TEST_CASE("mem: simulated MEM-PS keeps the key the next pass announces over a more frequent one") {
  // Pass 0: key 2 in three examples, key 1 in one; passes 1-3: key 1 alone; one row of
  // cache. Knowing only the pass it pulls, the MEM-PS keeps 2 (more frequent) and then
  // refuses 1 until 1's count passes 2's; knowing the next pass, it keeps 1 throughout.
  KeyTraceBuilder b(/*per_example=*/false);
  const uint64_t one = 1, two = 2;
  b.AddExample(&one, 1);
  for (int e = 0; e < 3; ++e) b.AddExample(&two, 1);
  for (int p = 1; p <= 3; ++p) {
    b.EndPass();
    b.AddExample(&one, 1);
  }
  KeyTrace t = b.Finish();
  REQUIRE(t.passes() == 4);
  CHECK(SimulateMemPs(t, 1, FreqSource::kRowCounter, /*lookahead=*/0).hits == 0);
  CHECK(SimulateMemPs(t, 1, FreqSource::kRowCounter, /*lookahead=*/1).hits == 3);
  CHECK(SimulateBelady(t, 1).hits == 3);
}

TEST_CASE("mem: simulated MEM-PS keeps frequent keys through a scan of new ones") {
  // Pass 0 sees 1 and 2 in many examples; each later pass brings them back with a run of
  // new keys that fill a 2-row cache. LRU loses them to the run; the MEM-PS keeps them.
  KeyTraceBuilder b(/*per_example=*/false);
  uint64_t next = 100;
  for (int pass = 0; pass < 4; ++pass) {
    for (int e = 0; e < 5; ++e) {
      const uint64_t hot[] = {1, 2};
      b.AddExample(hot, 2);
    }
    for (int e = 0; e < 3; ++e, ++next) b.AddExample(&next, 1);
    b.EndPass();
  }
  KeyTrace t = b.Finish();
  CHECK(t.accesses() == 4 * 5);
  CHECK(SimulateMemPs(t, 2, FreqSource::kRowCounter).hits == 6);  // 1 and 2 in passes 1-3
  CHECK(SimulateLru(t, 2).hits == 0);
  CHECK(SimulateBelady(t, 2).hits == 6);
  CHECK(SimulateFrequencyOracle(t, 2).hits == 6);
}

}  // namespace
}  // namespace strata
