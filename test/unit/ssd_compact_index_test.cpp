// CompactIndex (src/ssd/compact_index.h) against an exact map, including keys whose
// fingerprints collide, block splits, and its bytes per key; a batch spread over threads
// against the same upserts in order; LocationCodec's packing; and
// an SSD-PS holding two colliding keys through gets, puts, compaction and recovery.
#include <doctest/doctest.h>

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ssd/compact_index.h"
#include "ssd/location.h"
#include "ssd_test_util.h"
#include "strata/common/hash.h"
#include "strata/common/spare_threads.h"

namespace strata::ssd {
namespace {

// Two distinct keys with the same 40-bit tag (block and fingerprint): found by a birthday
// search over from, from + 1, ... (deterministic; about a million keys).
std::pair<uint64_t, uint64_t> CollidingKeys(uint64_t from = 0) {
  std::unordered_map<uint64_t, uint64_t> by_tag;
  for (uint64_t key = from;; ++key) {
    auto [it, fresh] = by_tag.emplace(Mix64(key) >> 24, key);
    if (!fresh) return {it->second, key};
  }
}

// Two keys whose fingerprints (a tag's low 24 bits) are equal and whose blocks, at the
// index's first 2^16, are neighbours: lower block's key first. A search over from, from + 1,
// ... (deterministic; about a million keys).
std::pair<uint64_t, uint64_t> NeighbourTwins(uint64_t from = 0) {
  std::unordered_map<uint64_t, std::vector<uint64_t>> by_fingerprint;
  const auto block_of = [](uint64_t key) { return (Mix64(key) >> 24) >> 24; };
  for (uint64_t key = from;; ++key) {
    std::vector<uint64_t>& twins = by_fingerprint[(Mix64(key) >> 24) & 0xffffff];
    for (const uint64_t other : twins) {
      if (block_of(other) + 1 == block_of(key)) return {other, key};
      if (block_of(key) + 1 == block_of(other)) return {key, other};
    }
    twins.push_back(key);
  }
}

// The same upserts into `batched` in one batch and into `serial` one by one: the same
// results key by key and the same size after.
void UpsertBoth(CompactIndex& serial, CompactIndex& batched, SpareThreads& threads, const std::vector<uint64_t>& keys,
                const std::vector<uint8_t>& indexed, int round) {
  std::vector<uint32_t> locs(keys.size()), old(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) locs[i] = static_cast<uint32_t>(round * 1'000'000 + i);
  std::vector<uint8_t> had(keys.size());
  batched.UpsertBatch(keys.data(), keys.size(), indexed.data(), locs.data(), had.data(), old.data(), &threads);
  int wrong = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    uint32_t serial_old = 0;
    const bool serial_had = serial.Upsert(keys[i], indexed[i] != 0, locs[i], &serial_old);
    wrong += serial_had != (had[i] != 0) || (serial_had && serial_old != old[i]);
  }
  CHECK(wrong == 0);
  CHECK(batched.size() == serial.size());
}

}  // namespace

TEST_CASE("ssd: location codec packs slot and record into 32 bits") {
  const LocationCodec codec(786432);  // 64 MiB of 64-byte rows
  CHECK(codec.record_bits() == 20);
  CHECK(codec.max_slots() == 4096);
  const uint32_t loc = codec.Make(4095, 786431);
  CHECK(codec.Slot(loc) == 4095);
  CHECK(codec.Record(loc) == 786431);
  CHECK(LocationCodec(1).record_bits() == 1);
}

TEST_CASE("ssd: compact index maps every key through growth, overwrites and splits") {
  // Distinct keys (an odd multiplier is a bijection); past 2^16 blocks x 128 entries, so
  // the blocks split once. Every 7th key is then overwritten.
  const uint32_t n = 9'000'000;
  const auto key_of = [](uint32_t i) { return uint64_t{i} * 0x9e3779b97f4a7c15ull; };
  const auto loc_of = [](uint32_t i) { return i % 7 == 0 ? i ^ 0x80000000u : i; };
  CompactIndex index;
  uint32_t old = 0, wrong = 0;  // counted, not checked one by one: 20M checks are slow
  for (uint32_t i = 0; i < n; ++i) wrong += index.Upsert(key_of(i), false, i, &old);
  for (uint32_t i = 0; i < n; i += 7) wrong += !index.Upsert(key_of(i), true, loc_of(i), &old) || old != i;
  REQUIRE(wrong == 0);
  REQUIRE(index.size() == n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t loc = 0;
    wrong += !index.Find(key_of(i), &loc) || loc != loc_of(i);
  }
  CHECK(wrong == 0);
  uint64_t visited = 0;
  index.ForEachLocation([&](uint32_t) { ++visited; });
  CHECK(visited == n);
  // Allocated bytes, not an estimate: under 8 per key.
  const double per_key = static_cast<double>(index.bytes()) / static_cast<double>(index.size());
  MESSAGE("compact index bytes per key: " << per_key);
  CHECK(per_key < 8.0);
  CHECK(per_key > 7.0);
}

TEST_CASE("ssd: a batch of upserts spread over threads leaves what the same upserts in order leave") {
  // Three batches of 100k keys: new keys with a colliding pair's first key and both keys
  // of a second pair, then new keys with the first pair's second (the overflow map), then
  // overwrites of every 5th earlier key and of the four colliding keys beside new ones.
  // Then a sparse batch: 16,384 keys, new and overwritten, all in the first and last 64th
  // of the blocks, so most ranges of blocks get none. Same results key by key, same
  // entries after.
  const auto [a, b] = CollidingKeys();
  const auto [c, d] = CollidingKeys(b + 1);
  const auto key_of = [](uint64_t i) { return (i + 1) * 0x9e3779b97f4a7c15ull; };
  CompactIndex serial, batched;
  SpareThreads threads(2);
  const auto upsert_both = [&](const std::vector<uint64_t>& keys, const std::vector<uint8_t>& indexed, int round) {
    UpsertBoth(serial, batched, threads, keys, indexed, round);
  };
  uint64_t next = 0;
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    std::vector<uint64_t> keys;
    std::vector<uint8_t> indexed;
    for (uint64_t i = 0; i < 100'000; ++i) {
      const bool overwrite = round == 2 && i % 2 == 0 && i * 5 / 2 < next;
      keys.push_back(overwrite ? key_of(i * 5 / 2) : key_of(next++));
      indexed.push_back(overwrite);
    }
    if (round < 2) keys.push_back(round == 0 ? a : b), indexed.push_back(0);
    if (round == 0) keys.insert(keys.end(), {c, d}), indexed.insert(indexed.end(), {0, 0});
    if (round == 2) keys.insert(keys.end(), {a, b, c, d}), indexed.insert(indexed.end(), {1, 1, 1, 1});
    upsert_both(keys, indexed, round);
  }
  const auto at_edge = [](uint64_t key) { return Mix64(key) >> 58 == 0 || Mix64(key) >> 58 == 63; };
  std::vector<uint64_t> sparse_new;
  {
    std::vector<uint64_t> keys;
    std::vector<uint8_t> indexed;
    for (uint64_t i = 0; i < next; i += 2) {
      if (at_edge(key_of(i))) keys.push_back(key_of(i)), indexed.push_back(1);
    }
    for (uint64_t j = next; keys.size() < kKeysWorthAThread; ++j) {
      if (at_edge(key_of(j))) keys.push_back(key_of(j)), indexed.push_back(0), sparse_new.push_back(key_of(j));
    }
    REQUIRE(!sparse_new.empty());
    upsert_both(keys, indexed, 3);
  }
  int wrong = 0;
  for (uint64_t i = 0; i < next; ++i) {
    uint32_t want = 0, got = 0;
    wrong += !serial.Find(key_of(i), &want) || !batched.Find(key_of(i), &got) || want != got;
  }
  for (const uint64_t k : sparse_new) {
    uint32_t want = 0, got = 0;
    wrong += !serial.Find(k, &want) || !batched.Find(k, &got) || want != got;
  }
  CHECK(wrong == 0);
  for (const uint64_t k : {a, b, c, d}) {
    uint32_t want = 0, got = 0;
    REQUIRE(serial.Find(k, &want));
    REQUIRE(batched.Find(k, &got));
    CHECK(want == got);
  }
  uint64_t serial_sum = 0, batched_sum = 0;
  serial.ForEachLocation([&](uint32_t l) { serial_sum += l; });
  batched.ForEachLocation([&](uint32_t l) { batched_sum += l; });
  CHECK(serial_sum == batched_sum);
  // The parts count the bytes of the arrays they regrow: every entry's 7 bytes at least, and
  // no more than the serial upserts' arrays, which keep slack.
  CHECK(batched.bytes() >= batched.size() * 7);
  CHECK(batched.bytes() <= serial.bytes());
}

TEST_CASE("ssd: a batch's new entry in one block is not taken for a key of the next with its fingerprint") {
  // A batch dense enough to lay each range of blocks out again plans all their blocks in
  // one list: x, new, is the last entry it adds to its block, and y, already indexed, the
  // first key of the next block, with x's fingerprint. y must take its own entry, not x's.
  const auto [x, y] = NeighbourTwins();
  const auto block_of = [](uint64_t key) { return Mix64(key) >> 48; };
  CompactIndex serial, batched;
  SpareThreads threads(2);
  uint64_t next = 0;
  const auto fill = [&](std::vector<uint64_t>* keys, std::vector<uint8_t>* indexed) {
    while (keys->size() < 100'000) {
      const uint64_t key = (++next) * 0x9e3779b97f4a7c15ull;
      if (block_of(key) == block_of(x) || block_of(key) == block_of(y)) continue;
      keys->push_back(key);
      indexed->push_back(0);
    }
  };
  std::vector<uint64_t> keys = {y};
  std::vector<uint8_t> indexed = {0};
  fill(&keys, &indexed);
  UpsertBoth(serial, batched, threads, keys, indexed, 0);
  keys = {x, y};
  indexed = {0, 1};
  fill(&keys, &indexed);
  UpsertBoth(serial, batched, threads, keys, indexed, 1);
  for (const uint64_t k : {x, y}) {
    uint32_t want = 0, got = 0;
    REQUIRE(serial.Find(k, &want));
    REQUIRE(batched.Find(k, &got));
    CHECK(want == got);
  }
}

TEST_CASE("ssd: compact index keeps fingerprint collisions apart") {
  const auto [a, b] = CollidingKeys();
  CompactIndex index;
  uint32_t old = 0, loc = 0;
  CHECK_FALSE(index.Upsert(a, false, 10, &old));
  // Absent b: the candidate is a's record, which the caller's key check rejects.
  REQUIRE(index.Find(b, &loc));
  CHECK(loc == 10);
  CHECK_FALSE(index.Upsert(b, false, 20, &old));  // told b is new: kept apart, a untouched
  CHECK(index.size() == 2);
  REQUIRE(index.Find(a, &loc));
  CHECK(loc == 10);
  REQUIRE(index.Find(b, &loc));
  CHECK(loc == 20);
  REQUIRE(index.Upsert(b, true, 21, &old));
  CHECK(old == 20);
  REQUIRE(index.Upsert(a, true, 11, &old));
  CHECK(old == 10);
  CHECK_FALSE(index.ReplaceIf(a, 10, 12));  // a no longer points at 10
  CHECK(index.ReplaceIf(a, 11, 12));
  CHECK(index.ReplaceIf(b, 21, 22));
  REQUIRE(index.Find(a, &loc));
  CHECK(loc == 12);
  REQUIRE(index.Find(b, &loc));
  CHECK(loc == 22);
  uint32_t sum = 0;
  index.ForEachLocation([&](uint32_t l) { sum += l; });
  CHECK(sum == 34);
}

TEST_CASE("ssd: compact index erases a key, in its block or in the overflow map") {
  for (int block_first : {0, 1}) {
    CAPTURE(block_first);
    const auto [a, b] = CollidingKeys();  // a gets the block entry, b the overflow map
    CompactIndex index;
    uint32_t old = 0, loc = 0;
    index.Upsert(a, false, 10, &old);
    index.Upsert(b, false, 20, &old);
    index.Upsert(12345, false, 30, &old);
    index.Erase(block_first ? a : b, &loc);
    CHECK(loc == (block_first ? 10u : 20u));
    CHECK(index.size() == 2);
    REQUIRE(index.Find(block_first ? b : a, &loc));  // the other keeps its own location
    CHECK(loc == (block_first ? 20u : 10u));
    REQUIRE(index.Find(12345, &loc));
    CHECK(loc == 30);
    index.Erase(block_first ? b : a, &loc);
    index.Erase(12345, &loc);
    CHECK(index.size() == 0);
    CHECK_FALSE(index.Find(a, &loc));
    CHECK_FALSE(index.Find(b, &loc));
    CHECK_FALSE(index.Upsert(b, false, 40, &old));  // b comes back, into its block
    REQUIRE(index.Find(b, &loc));
    CHECK(loc == 40);
  }
}

TEST_CASE("ssd: compact index reports absent keys without a candidate") {
  CompactIndex index;
  uint32_t old = 0, loc = 0;
  for (uint64_t k = 0; k < 1000; ++k) index.Upsert(k * 3, false, static_cast<uint32_t>(k), &old);
  int candidates = 0;
  for (uint64_t k = 0; k < 1000; ++k) candidates += index.Find(k * 3 + 1, &loc);
  CHECK(candidates == 0);  // 1000 x 1000 / 2^40: a match would be a bug here
}

TEST_CASE("ssd: a store tells colliding keys apart by the keys in their records") {
  using namespace ssd_test;
  const auto [a, b] = CollidingKeys();
  TempDir dir;
  const SsdOptions o = SmallOptions(dir.store(), 24);
  Model model;
  {
    std::unique_ptr<SsdStore> store;
    REQUIRE(OpenSsdStore(o, &store).ok());
    PutRows(*store, {a}, 1, &model);
    ExpectMatches(*store, model, {b});       // b's candidate is a's record: not b
    PutRows(*store, {b}, 1, &model);         // plain Put reads a's record: b is new
    ExpectMatches(*store, model);
    PutRows(*store, {a, b}, 2, &model);      // overwrites, each its own entry
    for (uint64_t v = 3; v < 4000; ++v) PutRows(*store, {a}, v, &model);  // stale segments
    REQUIRE(store->Sync().ok());  // durable mode compacts synced segments only
    REQUIRE(store->CompactNow().ok());
    REQUIRE(store->stats().compactions > 0);
    ExpectMatches(*store, model);
    REQUIRE(store->Sync().ok());
  }
  std::unique_ptr<SsdStore> reopened;
  REQUIRE(OpenSsdStore(o, &reopened).ok());
  ExpectMatches(*reopened, model);
  CHECK(reopened->num_keys() == 2);
}

}  // namespace strata::ssd
