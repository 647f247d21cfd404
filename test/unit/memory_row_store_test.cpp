// The DRAM store (NewMemoryRowStore) with its own threads: large Gets and Puts spread over
// them give the same rows, the same Scan order and the same stats as one thread, also when
// two large Gets run at once (one takes the threads, the other works alone).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "strata/store/row_store.h"

namespace strata {
namespace {

constexpr size_t kRowBytes = 24;

// Row bytes derived from the key and a version, so every Put's rows differ.
std::vector<uint8_t> RowsFor(const std::vector<uint64_t>& keys, uint64_t version) {
  std::vector<uint8_t> rows(keys.size() * kRowBytes);
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t b = 0; b < kRowBytes; ++b) rows[i * kRowBytes + b] = static_cast<uint8_t>(keys[i] * 31 + version + b);
  }
  return rows;
}

// Three rounds of Puts (new keys and overwrites, some calls over the parallel threshold).
void Fill(RowStore& store) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> all;
  for (uint64_t version = 0; version < 3; ++version) {
    std::vector<uint64_t> keys;
    for (int i = 0; i < 30000; ++i) keys.push_back(rng() % 200000);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::shuffle(keys.begin(), keys.end(), rng);
    REQUIRE(store.Put(keys.data(), keys.size(), RowsFor(keys, version).data()).ok());
    std::vector<uint64_t> small(keys.begin(), keys.begin() + 100);
    REQUIRE(store.Put(small.data(), small.size(), RowsFor(small, version + 10).data()).ok());
  }
}

std::vector<uint8_t> ScanBytes(RowStore& store) {
  std::vector<uint8_t> out;
  REQUIRE(store.Scan([&](uint64_t key, const uint8_t* row) {
                 const auto* k = reinterpret_cast<const uint8_t*>(&key);
                 out.insert(out.end(), k, k + sizeof(key));
                 out.insert(out.end(), row, row + kRowBytes);
               }).ok());
  return out;
}

TEST_CASE("store: the DRAM store's threads change neither its rows nor their order") {
  auto one = NewMemoryRowStore(kRowBytes, 1);
  auto four = NewMemoryRowStore(kRowBytes, 4);
  Fill(*one);
  Fill(*four);
  CHECK(four->num_keys() == one->num_keys());
  CHECK(four->stats().user_bytes_written == one->stats().user_bytes_written);
  CHECK(ScanBytes(*four) == ScanBytes(*one));

  std::vector<uint64_t> probe;
  for (uint64_t k = 0; k < 200000; k += 3) probe.push_back(k);
  std::vector<uint8_t> want(probe.size() * kRowBytes), want_found(probe.size());
  REQUIRE(one->Get(probe.data(), probe.size(), want.data(), want_found.data()).ok());
  std::vector<std::vector<uint8_t>> got(2, std::vector<uint8_t>(want.size())), found(2, std::vector<uint8_t>(probe.size()));
  std::vector<Status> st(2);
  std::thread other([&] { st[1] = four->Get(probe.data(), probe.size(), got[1].data(), found[1].data()); });
  st[0] = four->Get(probe.data(), probe.size(), got[0].data(), found[0].data());
  other.join();
  for (int t = 0; t < 2; ++t) {
    CHECK(st[t].ok());
    CHECK(found[t] == want_found);
    CHECK(got[t] == want);
  }
}

}  // namespace
}  // namespace strata
