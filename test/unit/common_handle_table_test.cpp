// HandleTable (strata/common/handle_table.h) against std::unordered_map under a seeded mix
// of inserts and erases: first churn among a few dozen keys in a small array (probe runs
// wrap around its end, and backward-shift erasure moves entries across it), then growth;
// and the same churn in an array reserved to a size that is not a power of two.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "strata/common/handle_table.h"

namespace strata {
namespace {

// Runs the seeded churn on table (reserved for `reserve` keys first) against an exact map;
// returns the largest number of keys held at once.
size_t ChurnAgainstMap(HandleTable& table, size_t reserve) {
  std::vector<uint64_t> key_of_handle;  // the owner's records: handle -> key
  std::vector<uint32_t> free_handles;
  std::unordered_map<uint64_t, uint32_t> model;
  auto key_of = [&](uint32_t h) { return key_of_handle[h]; };
  table.Reserve(reserve, key_of);
  std::mt19937_64 rng(17);
  size_t peak = 0;
  for (int op = 0; op < 200000; ++op) {
    // Few distinct keys at first (crowded runs), more later (growth).
    const uint64_t key = rng() % (op < 50000 ? 64 : 20000);
    auto it = model.find(key);
    if (it == model.end()) {
      uint32_t h = static_cast<uint32_t>(key_of_handle.size());
      if (!free_handles.empty()) {
        h = free_handles.back();
        free_handles.pop_back();
      } else {
        key_of_handle.push_back(0);
      }
      key_of_handle[h] = key;
      table.Insert(key, h, key_of);
      model.emplace(key, h);
      peak = std::max(peak, model.size());
    } else if (rng() % 3 != 0) {
      table.Erase(key, key_of);
      free_handles.push_back(it->second);
      model.erase(it);
    }
    if (op % 997 == 0) {
      REQUIRE(table.size() == model.size());
      for (uint64_t k = 0; k < 20000; ++k) {
        auto m = model.find(k);
        REQUIRE(table.Find(k, key_of) == (m == model.end() ? HandleTable::kNone : m->second));
      }
    }
  }
  size_t visited = 0;
  table.ForEach([&](uint32_t h) {
    CHECK(model.at(key_of_handle[h]) == h);
    ++visited;
  });
  CHECK(visited == model.size());
  return peak;
}

TEST_CASE("common: handle table matches an exact map through inserts, erases and growth") {
  HandleTable table;
  const size_t peak = ChurnAgainstMap(table, 0);
  // At most 3/4 full, at least 3/8 full at its largest: 5 bytes a slot, 6.7 to 13.3 a key.
  CHECK(3 * table.bytes() >= 20 * peak);
  CHECK(3 * table.bytes() <= 40 * peak);
}

// Reserved for 13,001 keys: an array of 17,335 slots (not a power of two), which the churn
// never outgrows, so it costs 6.7 bytes a reserved key.
TEST_CASE("common: a reserved handle table of any size matches an exact map") {
  HandleTable table;
  const size_t peak = ChurnAgainstMap(table, 13001);
  CHECK(peak <= 13001);
  CHECK(table.bytes() == 5 * (13001 + 13001 / 3 + 1));
}

}  // namespace
}  // namespace strata
