// RowStore::Erase on every store the trainer stacks (strata/store/row_store.h): the DRAM
// store, the SSD-PS in cache mode, and the MEM-PS over it with a cache far smaller than the
// rows (so erased keys are cached, flushed, or both): erased rows are gone for Get, Scan and
// num_keys, the others keep their bytes, and an erased key put again comes back. The SSD-PS
// compacts the erased records away (disk within its bound of the live rows), and a durable
// SSD-PS refuses to erase.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "ssd_test_util.h"
#include "strata/mem/mem_ps.h"

namespace strata::ssd_test {
namespace {

constexpr size_t kRowBytes = 64;

// Puts rows of `version` for keys into store and model.
void PutAll(RowStore& store, const std::vector<uint64_t>& keys, uint64_t version, std::map<uint64_t, std::vector<uint8_t>>* model) {
  std::vector<uint8_t> rows;
  for (uint64_t k : keys) {
    const std::vector<uint8_t> row = RowFor(k, version, kRowBytes);
    rows.insert(rows.end(), row.begin(), row.end());
    (*model)[k] = row;
  }
  REQUIRE(store.Put(keys.data(), keys.size(), rows.data()).ok());
}

// Get, Scan and num_keys all agree with the model; `gone` keys are absent.
void ExpectStore(RowStore& store, const std::map<uint64_t, std::vector<uint8_t>>& model, const std::vector<uint64_t>& gone) {
  std::vector<uint64_t> keys(gone);
  for (const auto& kv : model) keys.push_back(kv.first);
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
  REQUIRE(store.Get(keys.data(), keys.size(), rows.data(), found.data()).ok());
  size_t bad = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = model.find(keys[i]);
    bad += it == model.end() ? found[i] != 0
                             : !found[i] || std::memcmp(&rows[i * kRowBytes], it->second.data(), kRowBytes) != 0;
  }
  CHECK(bad == 0);
  std::map<uint64_t, std::vector<uint8_t>> scanned;
  REQUIRE(store.Scan([&](uint64_t k, const uint8_t* row) { scanned[k].assign(row, row + kRowBytes); }).ok());
  CHECK(scanned == model);
  CHECK(store.num_keys() == model.size());
}

// Three rounds: put every key, erase a third (chosen by the seed), put half of those back.
void CheckErase(RowStore& store, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys(4000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix64(seed * 1000003 + i);
  std::map<uint64_t, std::vector<uint8_t>> model;
  PutAll(store, keys, 1, &model);
  std::vector<uint64_t> gone;
  for (uint64_t k : keys) {
    if (rng() % 3 == 0) gone.push_back(k);
  }
  REQUIRE(store.Erase(gone.data(), gone.size()).ok());
  for (uint64_t k : gone) model.erase(k);
  ExpectStore(store, model, gone);
  std::vector<uint64_t> back(gone.begin(), gone.begin() + gone.size() / 2), still(gone.begin() + gone.size() / 2, gone.end());
  PutAll(store, back, 2, &model);
  ExpectStore(store, model, still);
}

TEST_CASE("store: the DRAM store erases rows and keeps its slots dense") {
  auto store = NewMemoryRowStore(kRowBytes);
  CheckErase(*store, 1);
}

TEST_CASE("store: the SSD-PS in cache mode erases rows and compacts them away") {
  TempDir dir;
  SsdOptions o = SmallOptions(dir.store(), kRowBytes);
  o.durable = false;
  auto store = OpenOrDie(o);
  CheckErase(*store, 2);
  StoreStats s;
  REQUIRE(store->WaitForDiskBound(&s).ok());
  CHECK(s.live_keys == store->num_keys());
  CHECK(s.disk_bytes <= store->DiskBound(s));
}

TEST_CASE("store: a durable SSD-PS refuses to erase") {
  TempDir dir;
  auto store = OpenOrDie(SmallOptions(dir.store(), kRowBytes));
  std::map<uint64_t, std::vector<uint8_t>> model;
  PutAll(*store, {7}, 1, &model);
  const uint64_t key = 7;
  CHECK(store->Erase(&key, 1).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("store: the MEM-PS erases cached, flushed and backed rows alike") {
  TempDir dir;
  SsdOptions o = SmallOptions(dir.store(), kRowBytes);
  o.durable = false;
  std::unique_ptr<RowStore> ssd;
  REQUIRE(OpenSsdStore(o, &ssd).ok());
  MemPsOptions mo;
  mo.capacity_bytes = 600 * (kRowBytes + kMemPsRowOverheadBytes);  // a sixth of the rows
  mo.stripes = 4;
  std::unique_ptr<MemPs> mem;
  REQUIRE(NewMemPs(mo, std::move(ssd), &mem).ok());
  CheckErase(*mem, 3);
}

}  // namespace
}  // namespace strata::ssd_test
