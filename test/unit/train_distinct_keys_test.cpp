// SortDistinct against std::sort + std::unique and run lengths, on seeded keys spread over
// many top bytes (slots) and repeated, with and without a thread pool.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <span>
#include <vector>

#include "train/distinct_keys.h"

namespace strata {
namespace {

TEST_CASE("train: SortDistinct is sort, unique and run lengths, on any thread count") {
  std::mt19937_64 rng(17);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 600000; ++i) {  // enough for several parts of the bucketing
    const uint64_t slot = rng() % 40;                  // top byte: the slot
    const uint64_t token = rng() % (slot < 5 ? 7 : 5000);  // a few slots with few tokens
    keys.push_back(slot << 56 | token);
  }
  keys.push_back(~uint64_t{0});  // the largest key, in the last bucket
  keys.push_back(0);
  std::vector<uint64_t> want = keys;
  std::sort(want.begin(), want.end());
  std::vector<uint32_t> want_counts;
  std::vector<uint64_t> want_keys;
  for (size_t i = 0; i < want.size();) {
    size_t j = i;
    while (j < want.size() && want[j] == want[i]) ++j;
    want_keys.push_back(want[i]);
    want_counts.push_back(static_cast<uint32_t>(j - i));
    i = j;
  }
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    std::vector<uint64_t> got = keys;
    std::vector<uint32_t> counts;
    SortDistinct(&got, &counts, &pool);
    CHECK(got == want_keys);
    CHECK(counts == want_counts);
    got = keys;
    SortDistinct(&got, nullptr, threads == 1 ? nullptr : &pool);
    CHECK(got == want_keys);
    const std::span<const uint64_t> all(keys);  // parts of uneven sizes, one empty
    SortDistinct({all.first(1000), all.subspan(1000, 0), all.subspan(1000)}, &got, &counts, &pool);
    CHECK(got == want_keys);
    CHECK(counts == want_counts);
  }
  std::vector<uint64_t> empty;
  SortDistinct(&empty, nullptr, nullptr);
  CHECK(empty.empty());
}

}  // namespace
}  // namespace strata
