// SSD-PS against an std::unordered_map model: seeded random Put/Get/Sync/reopen/compact
// sequences, plus targeted checks of the read path, compaction bounds and concurrency.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>

#include "ssd_test_util.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd_test {
namespace {

std::vector<uint64_t> DistinctKeys(std::mt19937_64& rng, size_t n, uint64_t space, bool skewed) {
  std::set<uint64_t> s;
  while (s.size() < n) {
    const uint64_t r = rng() % space;
    s.insert(skewed ? r * r / space : r);  // skewed: low keys updated far more often
    if (skewed && s.size() < n && s.size() * 4 > space) break;
  }
  std::vector<uint64_t> keys(s.begin(), s.end());
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

void RunModel(uint64_t seed, size_t row_bytes, int ops) {
  CAPTURE(seed);
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), row_bytes);
  auto store = OpenOrDie(opts);
  std::mt19937_64 rng(seed);
  Model model, synced;
  const uint64_t space = 3000;
  uint64_t version = 0;
  uint64_t compactions = 0;  // over every open of the store
  for (int op = 0; op < ops; ++op) {
    const int what = static_cast<int>(rng() % 100);
    if (what < 50) {
      PutRows(*store, DistinctKeys(rng, 1 + rng() % 150, space, rng() % 2), ++version, &model);
    } else if (what < 75) {
      std::vector<uint64_t> keys = DistinctKeys(rng, 1 + rng() % 100, space * 2, false);
      std::vector<uint8_t> rows(keys.size() * row_bytes), found(keys.size());
      const Status st = store->Get(keys.data(), keys.size(), rows.data(), found.data());
      REQUIRE_MESSAGE(st.ok(), st.ToString());
      for (size_t i = 0; i < keys.size(); ++i) {
        auto it = model.find(keys[i]);
        REQUIRE(found[i] == (it != model.end()));
        if (found[i]) REQUIRE(std::memcmp(rows.data() + i * row_bytes, it->second.data(), row_bytes) == 0);
      }
    } else if (what < 88) {
      REQUIRE(store->Sync().ok());
      synced = model;
    } else if (what < 93) {
      compactions += store->stats().compactions;
      store.reset();  // unsynced Puts are dropped
      store = OpenOrDie(opts);
      model = synced;
      ExpectMatches(*store, model, {space * 5, ~0ull - 1});
    } else if (what < 97) {
      REQUIRE(store->CompactNow().ok());
    } else {
      REQUIRE(store->WaitForCompaction().ok());
    }
  }
  ExpectMatches(*store, model);
  CHECK(compactions + store->stats().compactions > 0);
}

}  // namespace

TEST_CASE("ssd: model-based random operations with reopen and compaction") {
  for (uint64_t seed = 1; seed <= 4; ++seed) RunModel(seed, 64, 1500);
  RunModel(99, 13, 800);    // odd row size: records pack unevenly in a unit
  RunModel(100, 5000, 300);  // rows larger than a unit
}

TEST_CASE("ssd: never-written keys are not found without disk reads") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), 64);
  Model model;
  {
    auto store = OpenOrDie(opts);
    std::vector<uint64_t> keys(2000);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = i * 7;
    PutRows(*store, keys, 1, &model);
    REQUIRE(store->Sync().ok());
  }
  auto store = OpenOrDie(opts);
  const uint64_t before = store->stats().bytes_read;
  std::vector<uint64_t> absent = {1, 2, 3, 99999, ~0ull};
  std::vector<uint8_t> rows(absent.size() * 64, 0xAB), found(absent.size(), 1);
  REQUIRE(store->Get(absent.data(), absent.size(), rows.data(), found.data()).ok());
  CHECK(std::count(found.begin(), found.end(), 0) == static_cast<long>(absent.size()));
  CHECK(store->stats().bytes_read == before);
  CHECK(std::all_of(rows.begin(), rows.end(), [](uint8_t b) { return b == 0xAB; }));
  ExpectMatches(*store, model);
}

TEST_CASE("ssd: key ~0 and key 0 are ordinary keys") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), 24);
  Model model;
  {
    auto store = OpenOrDie(opts);
    PutRows(*store, {0, ~0ull, 5}, 1, &model);
    PutRows(*store, {~0ull}, 2, &model);
    REQUIRE(store->Sync().ok());
  }
  auto store = OpenOrDie(opts);
  ExpectMatches(*store, model, {1, ~0ull - 1});
}

TEST_CASE("ssd: direct I/O store round trip") {
  TempDir dir(/*prefer_tmpfs=*/false);
  SsdOptions opts = SmallOptions(dir.store(), 64);
  opts.direct_io = true;
  std::unique_ptr<SsdStore> store;
  const Status st = OpenSsdStore(opts, &store);
  if (!st.ok() && st.message().find("Invalid argument") != std::string::npos) {
    MESSAGE("skipped: the temp filesystem does not support O_DIRECT (" << st.ToString() << ")");
    return;
  }
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  Model model;
  std::vector<uint64_t> keys(3000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix64(i);
  PutRows(*store, keys, 1, &model);
  ExpectMatches(*store, model);  // partly from the append buffer
  REQUIRE(store->Sync().ok());
  PutRows(*store, std::vector<uint64_t>(keys.begin(), keys.begin() + 2500), 2, &model);
  REQUIRE(store->Sync().ok());
  REQUIRE(store->CompactNow().ok());
  store.reset();
  store = OpenOrDie(opts);
  ExpectMatches(*store, model);
}

TEST_CASE("ssd: opening with another row size names the directory") {
  TempDir dir;
  {
    auto store = OpenOrDie(SmallOptions(dir.store(), 64));
    PutRows(*store, {1, 2}, 1, nullptr);
    REQUIRE(store->Sync().ok());
  }
  std::unique_ptr<SsdStore> store;
  const Status st = OpenSsdStore(SmallOptions(dir.store(), 32), &store);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find(dir.store()) != std::string::npos);
  CHECK(st.message().find("row_bytes 64") != std::string::npos);
  SsdOptions bad = SmallOptions(dir.store(), 64);
  bad.compact_threshold = 1.5;
  CHECK(OpenSsdStore(bad, &store).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("ssd: compaction keeps disk use near 2x the live records") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), 64);
  auto store = OpenOrDie(opts);
  Model model;
  std::vector<uint64_t> keys(4000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  for (uint64_t v = 1; v <= 30; ++v) {
    PutRows(*store, keys, v, &model);
    REQUIRE(store->Sync().ok());
  }
  REQUIRE(store->WaitForCompaction().ok());
  const StoreStats s = store->stats();
  const auto layout = ssd::RecordLayout::For(64);
  const double live_record_bytes = double(s.live_keys) * layout.unit_bytes / layout.per_unit;
  CHECK(s.compactions > 0);
  CHECK(s.compaction_bytes > 0);
  // Every sealed segment is at least half live; the active and last outputs add slack.
  CHECK(double(s.disk_bytes) <= 2.0 * live_record_bytes + 3.0 * opts.segment_bytes);
  CHECK(s.write_amplification() > 1.0);
  CHECK(s.index_bytes_per_key() >= 16.0);
  ExpectMatches(*store, model);
}

TEST_CASE("ssd: disk budget compacts below the stale threshold") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), 64);
  opts.compact_threshold = 1.0;  // only the budget can trigger
  opts.disk_budget_bytes = 1 << 20;
  auto store = OpenOrDie(opts);
  Model model;
  std::vector<uint64_t> keys(3000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  for (uint64_t v = 1; v <= 8; ++v) {
    PutRows(*store, std::vector<uint64_t>(keys.begin(), keys.begin() + (v % 2 ? 3000 : 1500)), v, &model);
    REQUIRE(store->Sync().ok());
  }
  REQUIRE(store->WaitForCompaction().ok());
  CHECK(store->stats().compactions > 0);
  CHECK(store->stats().disk_bytes <= opts.disk_budget_bytes + 2 * opts.segment_bytes);
  ExpectMatches(*store, model);
}

TEST_CASE("ssd: concurrent gets stay correct while compaction rewrites segments") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), 64);
  opts.background_compaction = false;
  auto store = OpenOrDie(opts);
  Model model;
  std::vector<uint64_t> keys(3000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix64(i);
  for (uint64_t v = 1; v <= 6; ++v) {
    PutRows(*store, std::vector<uint64_t>(keys.begin(), keys.begin() + 3000 / v), v, &model);
    REQUIRE(store->Sync().ok());
  }
  const size_t segments_before = store->num_segments();
  std::atomic<size_t> bad{0};
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 40; ++round) {
      std::vector<uint64_t> batch;
      for (int j = 0; j < 200; ++j) batch.push_back(keys[rng() % keys.size()]);
      std::sort(batch.begin(), batch.end());
      batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
      std::vector<uint8_t> rows(batch.size() * 64), found(batch.size());
      if (!store->Get(batch.data(), batch.size(), rows.data(), found.data()).ok()) ++bad;
      for (size_t i = 0; i < batch.size(); ++i) {
        bad += !found[i] || std::memcmp(rows.data() + i * 64, model.at(batch[i]).data(), 64) != 0;
      }
    }
  };
  std::thread a(reader, 1), b(reader, 2);
  const Status st = store->CompactNow();
  a.join();
  b.join();
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  CHECK(bad == 0);
  CHECK(store->num_segments() < segments_before);
  ExpectMatches(*store, model);
}

}  // namespace strata::ssd_test
