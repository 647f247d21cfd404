// MEM-PS against a std::unordered_map model (random Get/Put/Pin/Flush/reopen at tiny
// capacities), plus the write discipline: dirty rows written before eviction, clean rows
// dropped without a write, pinned rows kept, never-written keys kept off the backing store.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ssd_test_util.h"
#include "strata/mem/mem_ps.h"

namespace strata {
namespace {

constexpr size_t kRowBytes = 24;

// Counts the traffic into a shared in-memory store that outlives each MEM-PS over it.
class CountingStore final : public RowStore {
 public:
  struct Counts {  // atomic: concurrent Gets count too
    std::atomic<uint64_t> put_calls{0}, put_rows{0}, get_keys{0};
  };
  CountingStore(RowStore* inner, Counts* counts) : inner_(inner), counts_(counts) {}
  size_t row_bytes() const override { return inner_->row_bytes(); }
  Status Get(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* found) override {
    counts_->get_keys += n;
    return inner_->Get(keys, n, rows, found);
  }
  Status Put(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    ++counts_->put_calls;
    counts_->put_rows += n;
    return inner_->Put(keys, n, rows);
  }
  Status Erase(const uint64_t* keys, size_t n) override { return inner_->Erase(keys, n); }
  Status Sync() override { return inner_->Sync(); }
  Status Scan(const std::function<void(uint64_t, const uint8_t*)>& v) override { return inner_->Scan(v); }
  uint64_t num_keys() const override { return inner_->num_keys(); }
  StoreStats stats() const override { return inner_->stats(); }

 private:
  RowStore* inner_;
  Counts* counts_;
};

std::vector<uint8_t> RowOf(uint64_t key, uint32_t version) {
  std::vector<uint8_t> row(kRowBytes);
  for (size_t i = 0; i < kRowBytes; ++i) row[i] = static_cast<uint8_t>(key * 31 + version * 7 + i);
  std::memcpy(&row[16], &version, 4);  // the frequency counter of these rows
  return row;
}

struct Fixture {
  std::unique_ptr<RowStore> disk = NewMemoryRowStore(kRowBytes);
  CountingStore::Counts counts;
  std::unique_ptr<MemPs> cache;

  void Open(size_t capacity_rows, int stripes, int freq_offset = 16, size_t flush_batch = 3,
            bool evict_in_calls = true) {
    MemPsOptions o;
    o.capacity_bytes = capacity_rows * (kRowBytes + kMemPsRowOverheadBytes);
    o.stripes = stripes;
    o.freq_offset = freq_offset;
    o.flush_batch_rows = flush_batch;
    o.evict_in_calls = evict_in_calls;
    REQUIRE(NewMemPs(o, std::make_unique<CountingStore>(disk.get(), &counts), &cache).ok());
  }
  void Put(uint64_t key, uint32_t version) { REQUIRE(cache->Put(&key, 1, RowOf(key, version).data()).ok()); }
  bool Get(uint64_t key, std::vector<uint8_t>* row) {
    row->assign(kRowBytes, 0);
    uint8_t found = 9;
    REQUIRE(cache->Get(&key, 1, row->data(), &found).ok());
    return found == 1;
  }
};

TEST_CASE("mem: MEM-PS matches a map model under random ops at tiny capacities") {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    Fixture f;
    const size_t capacity = rng() % 6;  // rows; 0 keeps only pinned rows
    const int stripes = 1 + static_cast<int>(rng() % 3);
    const int freq_offset = rng() % 2 ? 16 : -1;
    f.Open(capacity, stripes, freq_offset, 1 + rng() % 4);
    std::unordered_map<uint64_t, uint32_t> model;  // key -> version
    int pass = 0;
    bool pinned_pass = false;
    for (int op = 0; op < 1500; ++op) {
      const unsigned r = rng() % 100;
      if (r < 40) {  // batched Get
        std::vector<uint64_t> keys;
        for (uint64_t k = rng() % 40; keys.size() < 1 + rng() % 6; k = (k + 1 + rng() % 5) % 40) {
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        }
        std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
        REQUIRE(f.cache->Get(keys.data(), keys.size(), rows.data(), found.data()).ok());
        for (size_t i = 0; i < keys.size(); ++i) {
          auto it = model.find(keys[i]);
          REQUIRE(found[i] == (it != model.end()));
          if (found[i]) CHECK(std::memcmp(&rows[i * kRowBytes], RowOf(keys[i], it->second).data(), kRowBytes) == 0);
        }
      } else if (r < 80) {  // batched Put of distinct keys
        std::vector<uint64_t> keys;
        std::vector<uint8_t> rows;
        for (uint64_t k = rng() % 40; keys.size() < 1 + rng() % 6; k = (k + 1 + rng() % 7) % 40) {
          if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
          keys.push_back(k);
          const uint32_t v = ++model[k];
          auto row = RowOf(k, v);
          rows.insert(rows.end(), row.begin(), row.end());
        }
        REQUIRE(f.cache->Put(keys.data(), keys.size(), rows.data()).ok());
      } else if (r < 88) {  // next pass: pin some keys of it, release the last one
        ++pass;
        REQUIRE(f.cache->BeginPass(pass).ok());
        std::vector<uint64_t> keys;
        for (int i = 0; i < 4; ++i) keys.push_back(rng() % 40);
        f.cache->Pin(keys.data(), keys.size(), pass);
        if (pinned_pass) REQUIRE(f.cache->UnpinPass(pass - 1).ok());
        pinned_pass = true;
      } else if (r < 94) {
        REQUIRE(f.cache->Flush().ok());
        CHECK(f.cache->mem_stats().dirty_rows == 0);
      } else if (r < 97) {  // reopen over the same backing store
        REQUIRE(f.cache->Flush().ok());
        f.Open(capacity, stripes, freq_offset);
        pass = 0;
        pinned_pass = false;
      } else {
        CHECK(f.cache->num_keys() == model.size());
        size_t visited = 0;
        REQUIRE(f.cache->Scan([&](uint64_t key, const uint8_t* row) {
                  ++visited;
                  REQUIRE(model.count(key));
                  CHECK(std::memcmp(row, RowOf(key, model[key]).data(), kRowBytes) == 0);
                }).ok());
        CHECK(visited == model.size());
      }
      if (r >= 40 && r < 88) {  // Put, BeginPass and UnpinPass leave the cache within budget
        MemPsStats st = f.cache->mem_stats();
        CHECK(st.resident_rows <= capacity + st.pinned_rows);
      }
    }
    REQUIRE(f.cache->Flush().ok());
    CHECK(f.disk->num_keys() == model.size());
    for (const auto& [key, version] : model) {
      std::vector<uint8_t> row(kRowBytes);
      uint8_t found = 0;
      REQUIRE(f.disk->Get(&key, 1, row.data(), &found).ok());
      REQUIRE(found == 1);
      CHECK(std::memcmp(row.data(), RowOf(key, version).data(), kRowBytes) == 0);
    }
  }
}

TEST_CASE("mem: evicted dirty rows are written in batches, clean rows are dropped unwritten") {
  Fixture f;
  f.Open(/*capacity_rows=*/4, /*stripes=*/1, 16, /*flush_batch=*/3);
  for (uint64_t k = 0; k < 10; ++k) f.Put(k, 1);
  MemPsStats st = f.cache->mem_stats();
  CHECK(st.resident_rows == 4);
  CHECK(st.dirty_evictions == 6);
  CHECK(f.counts.put_rows == 6);       // every evicted row was dirty and got written
  CHECK(f.counts.put_calls == 6);      // one Put call evicts one row at a time here
  REQUIRE(f.cache->Flush().ok());
  CHECK(f.counts.put_rows == 10);
  CHECK(f.counts.put_calls == 6 + 2);  // 4 dirty rows in batches of 3
  // Reading the flushed rows back evicts only clean rows: no more writes.
  std::vector<uint8_t> row;
  for (uint64_t k = 0; k < 10; ++k) {
    REQUIRE(f.Get(k, &row));
    REQUIRE(f.cache->BeginPass(static_cast<int>(k) + 1).ok());
  }
  CHECK(f.counts.put_rows == 10);
  CHECK(f.cache->mem_stats().evictions > 6);
  // One big Put over budget evicts in batches of at most flush_batch_rows.
  std::vector<uint64_t> keys;
  std::vector<uint8_t> rows;
  for (uint64_t k = 100; k < 111; ++k) {
    keys.push_back(k);
    auto r = RowOf(k, 2);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  const uint64_t calls = f.counts.put_calls;
  REQUIRE(f.cache->Put(keys.data(), keys.size(), rows.data()).ok());
  CHECK(f.counts.put_rows == 10 + 7);
  CHECK(f.counts.put_calls == calls + 3);  // 7 dirty victims: 3 + 3 + 1
}

TEST_CASE("mem: with evict_in_calls off a Put evicts only over budget, Evict leaves room, nothing is lost") {
  Fixture f;
  f.Open(/*capacity_rows=*/4, /*stripes=*/1, 16, /*flush_batch=*/3, /*evict_in_calls=*/false);
  const uint64_t held[] = {0, 1};
  f.cache->Pin(held, 2, /*pass=*/0);
  for (uint64_t k = 0; k < 10; ++k) f.Put(k, static_cast<uint32_t>(k + 1));
  REQUIRE(f.cache->BeginPass(1).ok());
  CHECK(f.cache->mem_stats().resident_rows == 4);  // each Put over the budget evicted a row
  CHECK(f.counts.put_rows == 6);                   // the dirty victims, written before they went
  REQUIRE(f.cache->Evict().ok());
  // 10 rows came in since the last Evict: it leaves room for as many (at most half the
  // cache), so only the pinned rows stay.
  MemPsStats st = f.cache->mem_stats();
  CHECK(st.resident_rows == 2);
  CHECK(f.counts.put_rows == 8);
  std::vector<uint8_t> row;
  for (uint64_t k : held) {
    const uint64_t asked = f.counts.get_keys;
    REQUIRE(f.Get(k, &row));
    CHECK(f.counts.get_keys == asked);  // pinned: still cached
  }
  for (uint64_t k = 0; k < 10; ++k) {
    REQUIRE(f.Get(k, &row));
    CHECK(row == RowOf(k, static_cast<uint32_t>(k + 1)));
  }
}

TEST_CASE("mem: with evict_in_calls off the cache and its memory stay within the budget") {
  Fixture f;
  constexpr size_t kCapacity = 256;
  f.Open(kCapacity, /*stripes=*/1, 16, /*flush_batch=*/64, /*evict_in_calls=*/false);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> keys, written;
  std::vector<uint8_t> rows;
  auto put_batch = [&](uint64_t first_new) {  // 100 keys: 70 new, 30 seen before
    keys.clear();
    rows.clear();
    for (uint64_t k = 0; k < 100; ++k) keys.push_back(k < 70 || first_new == 0 ? first_new + k : rng() % first_new);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (uint64_t k : keys) {
      const std::vector<uint8_t> r = RowOf(k, 1);
      rows.insert(rows.end(), r.begin(), r.end());
    }
    REQUIRE(f.cache->Put(keys.data(), keys.size(), rows.data()).ok());
    CHECK(f.cache->mem_stats().resident_rows <= kCapacity);
    written.insert(written.end(), keys.begin(), keys.end());
  };
  uint64_t next = 0, warm_bytes = 0;
  for (int pass = 0; pass < 30; ++pass) {
    REQUIRE(f.cache->Evict().ok());  // a pull evicts, leaving room for a pass's inserts
    put_batch(next);
    next += 100;
    if (pass % 7 == 6) {  // two write-backs with no eviction between, as at a run's end
      put_batch(next);
      next += 100;
    }
    if (pass == 5) warm_bytes = f.cache->mem_stats().resident_bytes;
  }
  CHECK(f.cache->mem_stats().resident_bytes <= warm_bytes);  // no high-water mark above the budget
  std::vector<uint8_t> row;
  for (uint64_t k : written) {
    REQUIRE(f.Get(k, &row));
    CHECK(row == RowOf(k, 1));
  }
}

TEST_CASE("mem: stats count the keys of cache and backing store once, disk figures pass through") {
  Fixture f;
  f.Open(/*capacity_rows=*/4, /*stripes=*/1, 16, /*flush_batch=*/3, /*evict_in_calls=*/false);
  for (uint64_t k = 0; k < 10; ++k) f.Put(k, 1);  // 6 rows go to the backing store, 4 stay
  for (uint64_t k = 0; k < 3; ++k) f.Put(k, 2);   // some of them again: still one key each
  const StoreStats s = f.cache->stats();
  const StoreStats backing = f.disk->stats();
  CHECK(backing.live_keys == 6);
  CHECK(s.live_keys == 10);
  CHECK(s.logical_bytes == 10 * kRowBytes);
  CHECK(s.index_bytes == backing.index_bytes);
  CHECK(s.disk_bytes == backing.disk_bytes);
  CHECK(s.live_bytes == backing.live_bytes);
}

TEST_CASE("mem: pinned rows stay cached whatever else arrives") {
  Fixture f;
  f.Open(/*capacity_rows=*/2, /*stripes=*/2);
  const uint64_t pinned[] = {1, 2, 3};
  f.cache->Pin(pinned, 3, /*pass=*/0);  // before the rows exist: pins wait for them
  for (uint64_t k : pinned) f.Put(k, 1);
  const uint64_t next[] = {3, 4};
  f.cache->Pin(next, 2, /*pass=*/1);
  for (uint64_t k = 4; k < 50; ++k) f.Put(k, 1000);  // frequency 1000 beats the pinned rows' 1
  std::vector<uint8_t> row;
  const uint64_t before = f.counts.get_keys;
  for (uint64_t k : pinned) CHECK(f.Get(k, &row));
  CHECK(f.Get(4, &row));
  CHECK(f.counts.get_keys == before);  // all hits
  CHECK(f.cache->mem_stats().pinned_rows == 4);
  REQUIRE(f.cache->UnpinPass(0).ok());
  CHECK(f.cache->mem_stats().pinned_rows == 2);  // 3 and 4 are still pinned for pass 1
  REQUIRE(f.cache->UnpinPass(1).ok());
  CHECK(f.cache->mem_stats().pinned_rows == 0);
  CHECK(f.cache->mem_stats().resident_rows == 2);
}

TEST_CASE("mem: never-written keys are answered without asking the backing store") {
  Fixture f;
  f.Open(/*capacity_rows=*/8, /*stripes=*/4);
  std::vector<uint64_t> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = 1'000'000 + i;
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size(), 1);
  REQUIRE(f.cache->Get(keys.data(), keys.size(), rows.data(), found.data()).ok());
  CHECK(std::count(found.begin(), found.end(), 0) == 1000);
  CHECK(f.counts.get_keys == 0);
  CHECK(f.cache->mem_stats().bloom_skips == 1000);
  // New rows Put and evicted reach the backing store and are found again through it.
  for (uint64_t k = 0; k < 100; ++k) f.Put(k, 1);
  std::vector<uint8_t> row;
  for (uint64_t k = 0; k < 100; ++k) CHECK(f.Get(k, &row));
  // A false positive costs one lookup, never a wrong answer: few of 1000 absent keys leak.
  const uint64_t before = f.counts.get_keys;
  REQUIRE(f.cache->Get(keys.data(), keys.size(), rows.data(), found.data()).ok());
  CHECK(std::count(found.begin(), found.end(), 0) == 1000);
  CHECK(f.counts.get_keys - before < 50);
}

TEST_CASE("mem: concurrent Gets and Pins return the newest rows and keep the pins") {
  Fixture f;
  f.Open(/*capacity_rows=*/64, /*stripes=*/8);
  for (uint64_t k = 0; k < 400; ++k) f.Put(k, static_cast<uint32_t>(k % 5 + 1));
  REQUIRE(f.cache->Flush().ok());
  std::vector<int> errors(4, 0);
  std::vector<std::set<uint64_t>> pinned(4);  // by the odd threads, after their Get
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 300; ++i) {
        uint64_t keys[8];
        for (uint64_t& k : keys) k = rng() % 500;
        std::sort(keys, keys + 8);
        const size_t n = std::unique(keys, keys + 8) - keys;
        std::vector<uint8_t> rows(n * kRowBytes), found(n);
        if (!f.cache->Get(keys, n, rows.data(), found.data()).ok()) ++errors[t];
        for (size_t j = 0; j < n; ++j) {
          if (found[j] != (keys[j] < 400)) ++errors[t];
          if (found[j] && std::memcmp(&rows[j * kRowBytes], RowOf(keys[j], keys[j] % 5 + 1).data(), kRowBytes) != 0) ++errors[t];
        }
        if (t % 2 == 1 && i % 10 == 0) {  // rows only: a pinned absent key would get a placeholder
          const size_t present = std::lower_bound(keys, keys + n, uint64_t{400}) - keys;
          f.cache->Pin(keys, present, /*pass=*/2);
          pinned[t].insert(keys, keys + present);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == std::vector<int>(4, 0));
  REQUIRE(f.cache->BeginPass(1).ok());  // trims what the Gets loaded, but no pinned row
  std::vector<uint64_t> held;
  for (const auto& p : pinned) held.insert(held.end(), p.begin(), p.end());
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  REQUIRE(!held.empty());
  CHECK(f.cache->mem_stats().pinned_rows == held.size());
  const uint64_t asked = f.counts.get_keys;
  std::vector<uint8_t> rows(held.size() * kRowBytes), found(held.size());
  REQUIRE(f.cache->Get(held.data(), held.size(), rows.data(), found.data()).ok());
  CHECK(f.counts.get_keys == asked);  // every pinned row was still cached
  REQUIRE(f.cache->UnpinPass(2).ok());
  CHECK(f.cache->mem_stats().resident_rows <= 64);
}

TEST_CASE("mem: PutIfRoom puts beside Gets, Pins and an UnpinPass; each Get sees a row before or after") {
  Fixture f;
  constexpr uint64_t kKeys = 1600;
  f.Open(/*capacity_rows=*/2048, /*stripes=*/4, 16, /*flush_batch=*/64, /*evict_in_calls=*/false);
  std::vector<uint64_t> keys(kKeys);
  std::vector<uint8_t> old_rows, new_rows;
  for (uint64_t k = 0; k < kKeys; ++k) {
    keys[k] = k;
    const std::vector<uint8_t> a = RowOf(k, 1), b = RowOf(k, 2);
    old_rows.insert(old_rows.end(), a.begin(), a.end());
    new_rows.insert(new_rows.end(), b.begin(), b.end());
  }
  REQUIRE(f.cache->Put(keys.data(), kKeys, old_rows.data()).ok());
  REQUIRE(f.cache->Evict().ok());  // leaves room for inserts: over a third of the rows go to the backing store
  REQUIRE(f.counts.put_rows > 0);
  f.cache->Pin(keys.data(), kKeys / 2, /*pass=*/0);
  std::atomic<int> mixed{0};
  std::thread reader([&] {
    std::mt19937_64 rng(3);
    std::vector<uint8_t> rows(64 * kRowBytes), found(64);
    for (int i = 0; i < 400; ++i) {
      uint64_t some[64];
      for (uint64_t& k : some) k = rng() % kKeys;
      std::sort(some, some + 64);
      const size_t n = std::unique(some, some + 64) - some;
      if (!f.cache->Get(some, n, rows.data(), found.data()).ok()) ++mixed;
      if (i % 4 == 0) f.cache->Pin(some, n, /*pass=*/1);
      for (size_t j = 0; j < n; ++j) {
        const uint8_t* row = &rows[j * kRowBytes];
        const bool before = std::memcmp(row, &old_rows[some[j] * kRowBytes], kRowBytes) == 0;
        const bool after = std::memcmp(row, &new_rows[some[j] * kRowBytes], kRowBytes) == 0;
        if (!found[j] || !(before || after)) ++mixed;
      }
    }
  });
  bool put = false;
  const uint64_t written = f.counts.put_rows;
  REQUIRE(f.cache->PutIfRoom(keys.data(), kKeys, new_rows.data(), &put).ok());
  REQUIRE(f.cache->UnpinPass(0).ok());
  reader.join();
  CHECK(put);
  CHECK(mixed == 0);
  CHECK(f.counts.put_rows == written);  // nothing evicted, nothing written beside the Gets
  std::vector<uint8_t> rows(kKeys * kRowBytes), found(kKeys);
  REQUIRE(f.cache->Get(keys.data(), kKeys, rows.data(), found.data()).ok());
  CHECK(rows == new_rows);
  REQUIRE(f.cache->UnpinPass(1).ok());
  REQUIRE(f.cache->Flush().ok());  // the newest rows reach the backing store
  std::vector<uint8_t> stored(kKeys * kRowBytes);
  REQUIRE(f.disk->Get(keys.data(), kKeys, stored.data(), found.data()).ok());
  CHECK(stored == new_rows);
}

// Rows of keys at version v, one after another.
std::vector<uint8_t> RowsOf(const std::vector<uint64_t>& keys, uint32_t version) {
  std::vector<uint8_t> rows;
  for (uint64_t k : keys) {
    const std::vector<uint8_t> r = RowOf(k, version);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  return rows;
}

TEST_CASE("mem: PutIfRoom overwrites the cached rows, and refuses the new keys where a stripe has no room for them") {
  Fixture f;
  f.Open(/*capacity_rows=*/8, /*stripes=*/1, 16, /*flush_batch=*/3, /*evict_in_calls=*/false);
  for (uint64_t k = 0; k < 6; ++k) f.Put(k, 1);
  const std::vector<uint64_t> too_many = {0, 8, 9, 10};  // 3 new keys: 9 rows
  const std::vector<uint64_t> fits = {1, 2, 6, 7};       // 2 new keys: 8 rows
  bool put = true;
  REQUIRE(f.cache->PutIfRoom(too_many.data(), too_many.size(), RowsOf(too_many, 2).data(), &put).ok());
  CHECK_FALSE(put);
  CHECK(f.cache->mem_stats().resident_rows == 6);
  std::vector<uint8_t> row;
  REQUIRE(f.Get(0, &row));
  CHECK(row == RowOf(0, 2));  // the cached key's row is put all the same
  CHECK_FALSE(f.Get(8, &row));
  REQUIRE(f.cache->PutIfRoom(fits.data(), fits.size(), RowsOf(fits, 2).data(), &put).ok());
  CHECK(put);
  CHECK(f.cache->mem_stats().resident_rows == 8);
  CHECK(f.counts.put_rows == 0);
  for (uint64_t k : fits) {
    REQUIRE(f.Get(k, &row));
    CHECK(row == RowOf(k, 2));
  }
}

TEST_CASE("mem: a pinned key found in neither tier gets a placeholder, which answers Gets and which its pass's Put fills") {
  for (const bool backing_empty : {true, false}) {
    CAPTURE(backing_empty);
    Fixture f;
    if (!backing_empty) REQUIRE(f.disk->Put(std::vector<uint64_t>{7}.data(), 1, RowOf(7, 1).data()).ok());
    f.Open(/*capacity_rows=*/64, /*stripes=*/4, 16, /*flush_batch=*/8, /*evict_in_calls=*/false);
    std::vector<uint64_t> pinned, unpinned;
    for (uint64_t k = 0; k < 20; ++k) {
      pinned.push_back(1000 + k);
      unpinned.push_back(2000 + k);
    }
    f.cache->Pin(pinned.data(), pinned.size(), /*pass=*/0);
    std::vector<uint8_t> rows(20 * kRowBytes), found(20, 1);
    for (const auto* keys : {&pinned, &unpinned}) {
      REQUIRE(f.cache->Get(keys->data(), 20, rows.data(), found.data()).ok());
      CHECK(std::count(found.begin(), found.end(), 0) == 20);
    }
    // The filter answers over an empty backing store; over a non-empty one, the store does.
    const uint64_t asked = f.counts.get_keys;
    CHECK(asked == (backing_empty ? 0 : 40));
    CHECK(f.cache->mem_stats().resident_rows == 20);  // the pinned keys' placeholders
    CHECK(f.cache->mem_stats().pinned_rows == 20);
    CHECK(f.cache->num_keys() == (backing_empty ? 0 : 1));
    size_t scanned = 0;
    REQUIRE(f.cache->Scan([&](uint64_t, const uint8_t*) { ++scanned; }).ok());
    CHECK(scanned == (backing_empty ? 0 : 1));
    REQUIRE(f.cache->Get(pinned.data(), 20, rows.data(), found.data()).ok());  // a pass pulled ahead
    CHECK(std::count(found.begin(), found.end(), 0) == 20);
    CHECK(f.counts.get_keys == asked);
    // The pass's Put fills the placeholders: no new entry, no question to the backing store.
    bool put = false;
    const std::vector<uint8_t> trained = RowsOf(pinned, 3);
    REQUIRE(f.cache->PutIfRoom(pinned.data(), 20, trained.data(), &put).ok());
    CHECK(put);
    CHECK(f.cache->mem_stats().resident_rows == 20);
    CHECK(f.counts.get_keys == asked);
    CHECK(f.cache->num_keys() == (backing_empty ? 20 : 21));
    REQUIRE(f.cache->Get(pinned.data(), 20, rows.data(), found.data()).ok());
    CHECK(rows == trained);
    // Filled, they are dirty rows like any other.
    REQUIRE(f.cache->UnpinPass(0).ok());
    REQUIRE(f.cache->Flush().ok());
    CHECK(f.counts.put_rows == 20);
    std::vector<uint8_t> stored(20 * kRowBytes);
    REQUIRE(f.disk->Get(pinned.data(), 20, stored.data(), found.data()).ok());
    CHECK(stored == trained);
  }
}

TEST_CASE("mem: placeholders never filled are evicted without a write") {
  Fixture f;
  f.Open(/*capacity_rows=*/8, /*stripes=*/2);
  f.Put(1, 5);
  std::vector<uint64_t> keys;
  for (uint64_t k = 100; k < 120; ++k) keys.push_back(k);
  f.cache->Pin(keys.data(), keys.size(), /*pass=*/0);
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
  REQUIRE(f.cache->Get(keys.data(), keys.size(), rows.data(), found.data()).ok());
  CHECK(f.cache->mem_stats().resident_rows == 21);  // pinned placeholders may pass the budget
  REQUIRE(f.cache->UnpinPass(0).ok());               // their pass ends (say, never admitted)
  CHECK(f.cache->mem_stats().resident_rows <= 8);
  CHECK(f.counts.put_rows == 0);
  CHECK(f.cache->num_keys() == 1);
  std::vector<uint8_t> row;
  REQUIRE(f.Get(1, &row));  // the row outranks the placeholders' frequency 0
  CHECK(row == RowOf(1, 5));
}

TEST_CASE("mem: NewMemPs rejects bad options") {
  std::unique_ptr<MemPs> out;
  MemPsOptions o;
  o.freq_offset = static_cast<int>(kRowBytes) - 3;
  Status st = NewMemPs(o, NewMemoryRowStore(kRowBytes), &out);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("freq offset") != std::string::npos);
  o = MemPsOptions{};
  o.stripes = 0;
  CHECK(!NewMemPs(o, NewMemoryRowStore(kRowBytes), &out).ok());
  o = MemPsOptions{};
  o.flush_batch_rows = 0;
  CHECK(!NewMemPs(o, NewMemoryRowStore(kRowBytes), &out).ok());
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Passes as the trainer runs them over an SSD-PS, with EvictThenGet's reads beside its
// eviction's writes: each pass pins its keys (old and new, some shared with the previous
// pass), reads them, and puts them back changed; every row read is the newest put, a key
// never put is not found, and the SSD-PS serves the rows the small cache evicted.
TEST_CASE("mem: EvictThenGet over an SSD-PS reads beside the eviction's writes and returns the newest rows") {
  ssd_test::TempDir dir;
  SsdOptions so = ssd_test::SmallOptions(dir.store(), kRowBytes);
  so.durable = false;
  std::unique_ptr<SsdStore> ssd = ssd_test::OpenOrDie(so);
  REQUIRE(ssd->GetsBesidePuts());
  MemPsOptions o;
  o.capacity_bytes = 256 * (kRowBytes + kMemPsRowOverheadBytes);
  o.stripes = 4;
  o.freq_offset = 16;
  o.flush_batch_rows = 32;
  o.evict_in_calls = false;
  std::unique_ptr<MemPs> cache;
  REQUIRE(NewMemPs(o, std::move(ssd), &cache).ok());
  std::unordered_map<uint64_t, uint32_t> version;  // the model: the newest version put
  std::mt19937_64 rng(5);
  size_t bad = 0;
  for (int pass = 0; pass < 30; ++pass) {
    std::set<uint64_t> pick;
    while (pick.size() < 200) pick.insert(rng() % 3000);
    const std::vector<uint64_t> keys(pick.begin(), pick.end());
    cache->Pin(keys.data(), keys.size(), pass);
    std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
    REQUIRE(cache->EvictThenGet(keys.data(), keys.size(), rows.data(), found.data()).ok());
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = version.find(keys[i]);
      if (it == version.end()) {
        bad += found[i] != 0;
      } else {
        bad += !found[i] || std::memcmp(&rows[i * kRowBytes], RowOf(keys[i], it->second).data(), kRowBytes) != 0;
      }
      version[keys[i]] = static_cast<uint32_t>(pass + 1);
    }
    bool put = false;
    std::vector<uint8_t> trained;
    for (uint64_t k : keys) {
      const std::vector<uint8_t> r = RowOf(k, version[k]);
      trained.insert(trained.end(), r.begin(), r.end());
    }
    REQUIRE(cache->PutIfRoom(keys.data(), keys.size(), trained.data(), &put).ok());
    if (!put) REQUIRE(cache->Put(keys.data(), keys.size(), trained.data()).ok());
    REQUIRE(cache->UnpinPass(pass).ok());
    REQUIRE(cache->BeginPass(pass + 1).ok());
  }
  CHECK(bad == 0);
  const MemPsStats st = cache->mem_stats();
  CHECK(st.backing_rows_read > 0);  // rows came back from the SSD-PS
  CHECK(st.rows_flushed > 0);
  CHECK(cache->num_keys() == version.size());
}

}  // namespace
}  // namespace strata
