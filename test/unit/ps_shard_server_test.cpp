// ShardServer: row creation, pass consistency flags, MEM-PS pins across evictions, the
// deferred write-back, and the lock-held store calls, against the in-memory store and a
// MEM-PS over it.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "../common/counting_store.h"
#include "strata/common/row.h"
#include "strata/model/optimizer.h"
#include "strata/ps/shard_server.h"

namespace strata {
namespace {

ModelSpec Spec() {
  ModelSpec m;
  m.embedding_dim = 4;
  return m;
}

// Keys from, from + 1, ..., to.
std::vector<uint64_t> KeysFromTo(uint64_t from, uint64_t to) {
  std::vector<uint64_t> keys;
  for (uint64_t k = from; k <= to; ++k) keys.push_back(k);
  return keys;
}

std::shared_ptr<KeyIndex> IndexOf(const std::vector<uint64_t>& keys) {
  auto index = std::make_shared<KeyIndex>();
  index->Reset(keys.size());
  for (uint64_t k : keys) index->Insert(k);
  return index;
}

TEST_CASE("shard server: absent rows are created from (key, seed), stored rows come back as stored") {
  const size_t rb = RowLayout(4, 4).bytes();
  ShardServer server(Spec(), NewMemoryRowStore(rb), nullptr);
  const std::vector<uint64_t> keys = {7, 11, 13};
  std::vector<uint8_t> rows(keys.size() * rb), held(keys.size(), 9), want(rb);
  REQUIRE(server.Pull(0, keys.data(), keys.size(), rows.data(), held.data()).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    InitRow(Spec(), keys[i], want.data());
    CHECK(std::memcmp(&rows[i * rb], want.data(), rb) == 0);
    CHECK(held[i] == 0);
  }
  std::vector<uint8_t> stored(rb, 0x5a);
  REQUIRE(server.Store(&keys[1], 1, stored.data()).ok());
  REQUIRE(server.PullReadOnly(keys.data(), keys.size(), rows.data()).ok());
  CHECK(std::memcmp(&rows[rb], stored.data(), rb) == 0);
  uint64_t stored_keys = 0;
  REQUIRE(server.NumKeys(&stored_keys).ok());
  CHECK(stored_keys == 1);  // pulls create rows for the requester, never in the store
}

TEST_CASE("shard server: a pull flags rows that an earlier pass in flight holds, until it is released") {
  const size_t rb = RowLayout(4, 4).bytes();
  ShardServer server(Spec(), NewMemoryRowStore(rb), nullptr);
  server.Hold(3, IndexOf({1, 2}));
  server.Hold(4, IndexOf({5}));
  const std::vector<uint64_t> keys = {1, 2, 5, 9};
  std::vector<uint8_t> rows(keys.size() * rb), held(keys.size());
  REQUIRE(server.Pull(4, keys.data(), keys.size(), rows.data(), held.data()).ok());
  CHECK(held == std::vector<uint8_t>{1, 1, 0, 0});  // pass 4's own keys are not stale for it
  REQUIRE(server.Pull(5, keys.data(), keys.size(), rows.data(), held.data()).ok());
  CHECK(held == std::vector<uint8_t>{1, 1, 1, 0});
  REQUIRE(server.Release(3).ok());
  REQUIRE(server.Pull(5, keys.data(), keys.size(), rows.data(), held.data()).ok());
  CHECK(held == std::vector<uint8_t>{0, 0, 1, 0});
  REQUIRE(server.Release(4).ok());
  REQUIRE(server.Pull(6, keys.data(), keys.size(), rows.data(), held.data()).ok());
  CHECK(held == std::vector<uint8_t>{0, 0, 0, 0});
}

// A MEM-PS of room for about 8 rows over a counting store.
struct CachedServer {
  test::CountingStore* backing = nullptr;
  MemPs* mem = nullptr;
  std::unique_ptr<ShardServer> server;
};

CachedServer MakeCached(size_t capacity_rows = 8, int stripes = 1) {
  const size_t rb = RowLayout(4, 4).bytes();
  auto backing = std::make_unique<test::CountingStore>(rb);
  CachedServer c;
  c.backing = backing.get();
  MemPsOptions mo;
  mo.capacity_bytes = capacity_rows * (rb + kMemPsRowOverheadBytes);
  mo.stripes = stripes;
  mo.evict_in_calls = false;
  std::unique_ptr<MemPs> mem;
  REQUIRE(NewMemPs(mo, std::move(backing), &mem).ok());
  c.mem = mem.get();
  c.server = std::make_unique<ShardServer>(Spec(), std::move(mem), c.mem);
  return c;
}

TEST_CASE("shard server: pulled passes stay cached until released; then evictions write them back") {
  CachedServer c = MakeCached();
  const size_t rb = c.server->row_bytes();
  const std::vector<uint64_t> first = KeysFromTo(1, 12), second = KeysFromTo(101, 112);
  std::vector<uint8_t> rows(12 * rb), held(12);
  const std::vector<uint8_t> trained(12 * rb, 0x11);
  REQUIRE(c.server->Announce(0, first.data(), first.size()).ok());
  REQUIRE(c.server->Pull(0, first.data(), first.size(), rows.data(), held.data()).ok());
  REQUIRE(c.server->Store(first.data(), first.size(), trained.data()).ok());  // pass 0's rows come home
  // Pass 1's pull evicts down to the budget of 8 rows, but pass 0 is pinned until released.
  REQUIRE(c.server->Pull(1, second.data(), second.size(), rows.data(), held.data()).ok());
  CHECK(c.backing->puts().empty());
  REQUIRE(c.server->Release(0).ok());
  REQUIRE(c.server->Pull(2, second.data(), second.size(), rows.data(), held.data()).ok());
  // Pass 1's 12 placeholders (its keys are new) are pinned and take the budget of 8 and
  // more, so all 12 of pass 0's dirty rows leave, each written once.
  CHECK(c.backing->puts().size() == 12);
  // Lossless: pass 0's rows come back as stored, from the cache or the backing store.
  std::vector<uint8_t> back(12 * rb);
  REQUIRE(c.server->PullReadOnly(first.data(), first.size(), back.data()).ok());
  CHECK(back == trained);
  TierCounters t;
  REQUIRE(c.server->Counters(&t).ok());
  CHECK(t[TierCounters::kCacheHits] + t[TierCounters::kCacheMisses] > 0);
  CHECK(t[TierCounters::kSsdRowsWritten] == 12);
}

TEST_CASE("shard server: with a MEM-PS, a pass's Store and Release run beside the next pull, which flags or sees each row") {
  CachedServer c = MakeCached(/*capacity_rows=*/1024, /*stripes=*/4);
  const size_t rb = c.server->row_bytes();
  const std::vector<uint64_t> first = KeysFromTo(1, 300), second = KeysFromTo(151, 450);
  std::vector<uint8_t> rows(300 * rb), held(300);
  const std::vector<uint8_t> trained(300 * rb, 0x11);
  REQUIRE(c.server->Announce(0, first.data(), first.size()).ok());
  REQUIRE(c.server->Pull(0, first.data(), first.size(), rows.data(), held.data()).ok());
  c.server->Hold(0, IndexOf(first));
  REQUIRE(c.server->Announce(1, second.data(), second.size()).ok());
  Status stored, released;
  std::thread push([&] {
    stored = c.server->Store(first.data(), first.size(), trained.data());
    released = c.server->Release(0);
  });
  REQUIRE(c.server->Pull(1, second.data(), second.size(), rows.data(), held.data()).ok());
  push.join();
  REQUIRE(stored.ok());
  REQUIRE(released.ok());
  for (size_t i = 0; i < second.size(); ++i) {
    if (second[i] > 300) {
      CHECK(held[i] == 0);
    } else if (!held[i]) {  // read after the Store, so the pass's final row
      CHECK(std::memcmp(&rows[i * rb], trained.data(), rb) == 0);
    }
  }
  CHECK(c.backing->puts().empty());  // the cache had room: nothing evicted beside the pull
  std::vector<uint8_t> back(300 * rb);
  REQUIRE(c.server->PullReadOnly(first.data(), first.size(), back.data()).ok());
  CHECK(back == trained);
}

TEST_CASE("shard server: in DRAM, write-backs wait in order for the next pull; two passes may share keys") {
  const size_t rb = RowLayout(4, 4).bytes();
  auto counting = std::make_unique<test::CountingStore>(rb);
  test::CountingStore* backing = counting.get();
  ShardServer server(Spec(), std::move(counting), nullptr);
  const std::vector<uint64_t> keys = {1, 2, 3, 4, 5};
  std::vector<uint8_t> rows(keys.size() * rb), held(keys.size());
  REQUIRE(server.Pull(0, keys.data(), keys.size(), rows.data(), held.data()).ok());
  server.Hold(0, IndexOf(keys));
  REQUIRE(server.Pull(1, keys.data(), keys.size(), rows.data(), held.data()).ok());
  server.Hold(1, IndexOf(keys));
  const std::vector<uint8_t> first(keys.size() * rb, 0x11), second(keys.size() * rb, 0x22);
  // Both passes come home before any pull applies them: the buffer holds the same keys twice.
  REQUIRE(server.Store(keys.data(), keys.size(), first.data()).ok());
  REQUIRE(server.Release(0).ok());
  REQUIRE(server.Store(keys.data(), keys.size(), second.data()).ok());
  REQUIRE(server.Release(1).ok());
  CHECK(backing->puts().empty());  // nothing applied yet
  REQUIRE(server.Pull(2, keys.data(), keys.size(), rows.data(), held.data()).ok());
  CHECK(held == std::vector<uint8_t>(keys.size(), 0));  // both passes released by the pull
  CHECK(rows == second);  // the newer pass's rows win
  CHECK(backing->puts().at(1) == 2);  // each Store became a Put of its own
}

TEST_CASE("shard server: Load stores and evicts; WithStore sees every row") {
  CachedServer c = MakeCached();
  const size_t rb = c.server->row_bytes();
  std::vector<uint64_t> keys;
  for (uint64_t k = 1; k <= 40; ++k) keys.push_back(k);
  std::vector<uint8_t> rows(keys.size() * rb, 0x22);
  REQUIRE(c.server->Load(keys.data(), keys.size(), rows.data()).ok());
  CHECK(c.mem->mem_stats().resident_rows <= 8);
  size_t seen = 0;
  REQUIRE(c.server->WithStore([&](RowStore& store) {
    return store.Scan([&](uint64_t, const uint8_t* row) { seen += row[0] == 0x22; });
  }).ok());
  CHECK(seen == keys.size());
}

TEST_CASE("shard server: the changed-key log holds the keys stored since it was last taken, less those erased since") {
  const size_t rb = RowLayout(4, 4).bytes();
  ShardServer server(Spec(), NewMemoryRowStore(rb), nullptr);
  server.LogChanged(true);
  const std::vector<uint64_t> stored = {6, 1, 2, 3, 4, 5, 2, 6};  // some twice
  std::vector<uint8_t> rows(stored.size() * rb, 0x33);
  REQUIRE(server.Store(stored.data(), stored.size(), rows.data()).ok());
  const std::vector<uint64_t> erased = {5, 2, 99};  // 99 was never stored
  REQUIRE(server.EraseStored(erased.data(), erased.size()).ok());
  REQUIRE(server.Store(&stored[5], 1, rows.data()).ok());  // 5 comes back
  std::vector<uint64_t> logged;
  REQUIRE(server.WithChanged([&](RowStore& store, const std::vector<uint64_t>& changed) {
    logged = changed;
    std::vector<uint8_t> got(changed.size() * rb), found(changed.size());
    STRATA_RETURN_IF_ERROR(store.Get(changed.data(), changed.size(), got.data(), found.data()));
    for (uint8_t f : found) CHECK(f == 1);  // every logged key is in the store
    return Status::OK();
  }).ok());
  CHECK(logged == std::vector<uint64_t>{1, 3, 4, 5, 6});
  REQUIRE(server.WithChanged([&](RowStore&, const std::vector<uint64_t>& changed) {
    CHECK(changed.empty());  // taken: the next increment starts afresh
    return Status::OK();
  }).ok());
}

}  // namespace
}  // namespace strata
