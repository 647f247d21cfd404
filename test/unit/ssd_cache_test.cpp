// SSD-PS cache mode (SsdOptions::durable = false), the mode the trainer runs: it starts
// empty, writes no manifest, compacts while rows are written, and holds disk use within
// DiskBound() = 2 x live bytes + one segment at every round of a long random-overwrite
// workload, checked against an std::unordered_map model. Deterministic: the bound is
// checked on the snapshot WaitForDiskBound returns, which waits for the compactor only
// when the bound is exceeded; no sleeps, no timing.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "ssd_test_util.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd_test {
namespace {

constexpr size_t kRowBytes = 64;

SsdOptions CacheOptions(const std::string& dir) {
  SsdOptions o = SmallOptions(dir, kRowBytes);
  o.durable = false;
  return o;
}

// Round r rewrites a random subset of `keys`: mostly small, sometimes all of them, and on
// odd seeds skewed towards the low keys (hot keys churn, cold ones stay put in old segments).
std::vector<uint64_t> RoundKeys(std::mt19937_64& rng, const std::vector<uint64_t>& keys, bool skewed) {
  if (rng() % 10 == 0) return keys;
  const size_t n = 1 + rng() % (keys.size() / 8);
  std::vector<uint64_t> out;
  std::vector<uint8_t> taken(keys.size(), 0);
  while (out.size() < n) {
    size_t i = rng() % keys.size();
    if (skewed) i = i * i / keys.size();
    if (taken[i]) continue;
    taken[i] = 1;
    out.push_back(keys[i]);
  }
  return out;
}

// Reads back a sample of the model's keys while the compactor may be rewriting them.
void ExpectSample(SsdStore& store, const Model& model, std::mt19937_64& rng) {
  std::vector<uint64_t> keys;
  for (const auto& kv : model) {
    if (rng() % 8 == 0) keys.push_back(kv.first);
  }
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
  const Status st = store.Get(keys.data(), keys.size(), rows.data(), found.data());
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  size_t bad = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    bad += !found[i] || std::memcmp(rows.data() + i * kRowBytes, model.at(keys[i]).data(), kRowBytes) != 0;
  }
  REQUIRE(bad == 0);
}

// Writes `rounds` rounds of overwrites and checks the bound after each one.
void RunBound(uint64_t seed, double threshold, bool background, int rounds) {
  CAPTURE(seed);
  CAPTURE(threshold);
  CAPTURE(background);
  TempDir dir;
  SsdOptions opts = CacheOptions(dir.store());
  opts.compact_threshold = threshold;
  opts.background_compaction = background;
  auto store = OpenOrDie(opts);
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys(3000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix64(seed * 100000 + i);
  Model model;
  PutRows(*store, keys, 0, &model);
  uint64_t worst = 0, over = 0;
  for (int r = 1; r <= rounds; ++r) {
    PutRows(*store, RoundKeys(rng, keys, seed % 2 == 1), static_cast<uint64_t>(r), &model);
    StoreStats s;
    const Status st = store->WaitForDiskBound(&s);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    REQUIRE(s.live_keys == keys.size());
    REQUIRE(s.live_bytes >= ssd::kHeaderBytes + ssd::kBlockBytes);  // where the bound is promised
    over += s.disk_bytes > store->DiskBound(s);
    worst = std::max(worst, s.disk_bytes);
    if (r % 25 == 0) ExpectSample(*store, model, rng);
  }
  CHECK(over == 0);
  const StoreStats end = store->stats();
  MESSAGE("seed " << seed << ": worst disk " << worst << " bytes, bound at the end " << store->DiskBound(end)
                  << ", compactions " << end.compactions);
  CHECK(end.compactions > 0);
  REQUIRE(store->WaitForCompaction().ok());
  ExpectMatches(*store, model);
}

}  // namespace

TEST_CASE("ssd cache: disk stays within 2x live + one segment at every round") {
  for (uint64_t seed = 1; seed <= 4; ++seed) RunBound(seed, 0.5, /*background=*/true, 300);
  // Threshold 1: no segment is ever stale enough on its own, only the bound compacts.
  RunBound(5, 1.0, /*background=*/true, 300);
  RunBound(6, 1.0, /*background=*/true, 300);
  // No compaction thread: WaitForDiskBound compacts on the caller's thread.
  RunBound(7, 0.5, /*background=*/false, 200);
  RunBound(8, 1.0, /*background=*/false, 200);
}

TEST_CASE("ssd cache: starts empty over an old store and writes no manifest") {
  TempDir dir;
  {
    auto durable = OpenOrDie(SmallOptions(dir.store(), kRowBytes));
    PutRows(*durable, {1, 2, 3}, 1, nullptr);
    REQUIRE(durable->Sync().ok());
  }
  REQUIRE(std::filesystem::exists(dir.store() + "/" + ssd::kManifestName));
  auto store = OpenOrDie(CacheOptions(dir.store()));
  CHECK(store->num_keys() == 0);
  CHECK(!std::filesystem::exists(dir.store() + "/" + ssd::kManifestName));
  Model model;
  std::vector<uint64_t> keys(2000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  for (uint64_t v = 1; v <= 5; ++v) PutRows(*store, keys, v, &model);
  REQUIRE(store->Sync().ok());  // makes nothing durable, and is no error
  REQUIRE(store->WaitForCompaction().ok());
  CHECK(store->stats().compactions > 0);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.store())) {
    if (e.path().filename() == "LOCK") continue;  // the open store's claim on its directory
    CHECK(ssd::ParseSegmentFileName(e.path().filename().string()) != 0);
    ++files;
  }
  CHECK(files == store->num_segments());
  ExpectMatches(*store, model, {5000});
}

TEST_CASE("ssd cache: gets stay correct while the compactor rewrites segments") {
  TempDir dir;
  auto store = OpenOrDie(CacheOptions(dir.store()));
  std::vector<uint64_t> keys(4000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix64(i);
  Model model;
  std::mt19937_64 rng(42);
  for (uint64_t v = 1; v <= 40; ++v) {
    // Put needs the caller's serialization, so the readers run between Puts, beside the
    // compactor that the Puts woke.
    PutRows(*store, RoundKeys(rng, keys, false), v, &model);
    std::vector<std::thread> readers;
    std::vector<uint64_t> seeds = {rng(), rng()};
    std::atomic<int> failures{0};
    for (uint64_t s : seeds) {
      readers.emplace_back([&, s] {
        std::mt19937_64 r(s);
        std::vector<uint64_t> ks;
        for (int i = 0; i < 500; ++i) ks.push_back(keys[r() % keys.size()]);
        std::vector<uint8_t> rows(ks.size() * kRowBytes), found(ks.size());
        if (!store->Get(ks.data(), ks.size(), rows.data(), found.data()).ok()) ++failures;
        for (size_t i = 0; i < ks.size(); ++i) {
          auto it = model.find(ks[i]);
          if (it == model.end() ? found[i] != 0
                                : !found[i] || std::memcmp(rows.data() + i * kRowBytes, it->second.data(), kRowBytes) != 0) {
            ++failures;
          }
        }
      });
    }
    for (auto& t : readers) t.join();
    REQUIRE(failures == 0);
  }
  REQUIRE(store->WaitForCompaction().ok());
  CHECK(store->stats().compactions > 0);
  ExpectMatches(*store, model);
}

// The MEM-PS reads a pass's rows while its eviction writes others. A writer thread puts
// new keys and rewrites old ones in small batches (records in the append buffer, buffer
// flushes and segment rolls all happen beside the reads) while this thread reads: every
// key it reads returns its row before the rewrite or after it, and every batch the writer
// has finished reads back whole, from the buffer or the disk.
TEST_CASE("ssd cache: gets beside one writer's puts return whole rows, old or new") {
  TempDir dir;
  auto store = OpenOrDie(CacheOptions(dir.store()));
  REQUIRE(store->GetsBesidePuts());
  constexpr uint64_t kOld = 2000, kBatch = 64, kBatches = 200;
  std::vector<uint64_t> old_keys;
  std::vector<uint8_t> old_rows;
  for (uint64_t k = 0; k < kOld; ++k) {
    old_keys.push_back(k);
    const std::vector<uint8_t> r = RowFor(k, 1, kRowBytes);
    old_rows.insert(old_rows.end(), r.begin(), r.end());
  }
  REQUIRE(store->Put(old_keys.data(), kOld, old_rows.data()).ok());
  std::atomic<uint64_t> batches_done{0};
  std::atomic<bool> writer_finished{false};
  Status write_status;
  std::thread writer([&] {
    for (uint64_t b = 0; b < kBatches && write_status.ok(); ++b) {
      std::vector<uint64_t> keys;
      std::vector<uint8_t> rows, in_store;
      for (uint64_t j = 0; j < kBatch; ++j) {
        const bool rewrite = j % 4 == 0;
        const uint64_t key = rewrite ? (b * kBatch + j) % kOld : 1'000'000 + b * kBatch + j;
        keys.push_back(key);
        const std::vector<uint8_t> r = RowFor(key, 2, kRowBytes);
        rows.insert(rows.end(), r.begin(), r.end());
        in_store.push_back(rewrite ? 1 : 0);
      }
      write_status = store->PutKnown(keys.data(), keys.size(), rows.data(), in_store.data());
      batches_done.store(b + 1, std::memory_order_release);
    }
    writer_finished = true;
  });
  std::mt19937_64 rng(11);
  size_t bad = 0, reads = 0;
  Status read_status;  // checked once after the loop, whose rounds depend on the writer's pace
  do {  // at least once, however fast the writer
    const uint64_t done = batches_done.load(std::memory_order_acquire);
    std::vector<uint64_t> keys;
    for (int j = 0; j < 32; ++j) keys.push_back(rng() % kOld);
    for (uint64_t j = 0; done > 0 && j < 32; ++j) keys.push_back(1'000'000 + (rng() % done) * kBatch + 1 + j % 3);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
    read_status = store->Get(keys.data(), keys.size(), rows.data(), found.data());
    if (!read_status.ok()) break;
    for (size_t i = 0; i < keys.size(); ++i, ++reads) {
      const uint8_t* row = rows.data() + i * kRowBytes;
      const bool is_old = keys[i] < kOld && std::memcmp(row, RowFor(keys[i], 1, kRowBytes).data(), kRowBytes) == 0;
      const bool is_new = std::memcmp(row, RowFor(keys[i], 2, kRowBytes).data(), kRowBytes) == 0;
      bad += !found[i] || !(is_old || is_new);
    }
  } while (!writer_finished);
  writer.join();
  REQUIRE_MESSAGE(read_status.ok(), read_status.ToString());
  REQUIRE_MESSAGE(write_status.ok(), write_status.ToString());
  CHECK(bad == 0);
  CHECK(reads > 0);
  CHECK(store->num_keys() == kOld + kBatches * kBatch * 3 / 4);
}

TEST_CASE("ssd: a second store on an open store's directory is refused naming it; closing frees it") {
  TempDir dir;
  std::unique_ptr<SsdStore> first, second;
  REQUIRE(OpenSsdStore(CacheOptions(dir.store()), &first).ok());
  const Status st = OpenSsdStore(CacheOptions(dir.store()), &second);
  CHECK(!st.ok());
  CHECK(st.message().find("is in use by another job") != std::string::npos);
  CHECK(st.message().find(dir.store()) != std::string::npos);
  first.reset();
  CHECK(OpenSsdStore(CacheOptions(dir.store()), &second).ok());
}

}  // namespace strata::ssd_test
