// HostTable: rows found by key after inserts and overwrites, absent keys, a full table's
// error, keys whose hashes share their home slot and tag, Reset, smaller and larger than the
// pass before, and Reserve.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "hbm/host_table.h"
#include "strata/common/hash.h"

namespace strata {
namespace {

std::vector<uint8_t> RowOf(uint64_t key, size_t bytes) {
  std::vector<uint8_t> row(bytes);
  for (size_t i = 0; i < bytes; ++i) row[i] = static_cast<uint8_t>(key * 31 + i);
  return row;
}

TEST_CASE("host table: each key finds its own row; a full table refuses one more key, naming the sizes") {
  constexpr size_t kRowBytes = 20, kKeys = 1000;
  HostTable table(kRowBytes);
  table.Reset(kKeys);
  for (uint64_t k = 0; k < kKeys; ++k) REQUIRE(table.Insert(k * 7919, RowOf(k, kRowBytes).data()).ok());
  REQUIRE(table.Insert(5 * 7919, RowOf(12345, kRowBytes).data()).ok());  // an overwrite takes no room
  CHECK(table.size() == kKeys);
  for (uint64_t k = 0; k < kKeys; ++k) {
    const uint8_t* row = table.Find(k * 7919);
    REQUIRE(row != nullptr);
    CHECK(std::memcmp(row, RowOf(k == 5 ? 12345 : k, kRowBytes).data(), kRowBytes) == 0);
  }
  CHECK(table.Find(3) == nullptr);
  const Status full = table.Insert(3, RowOf(3, kRowBytes).data());
  CHECK(full.code() == Status::Code::kResourceExhausted);
  CHECK(full.ToString().find("1000 keys planned") != std::string::npos);
  table.Reset(4);
  CHECK(table.size() == 0);
  CHECK(table.Find(7919) == nullptr);
}

// The multiplicative inverse of the table's hash multiplier, mod 2^64 (Newton's iteration):
// keys k + i * it hash to consecutive values, so they share their home slot and their tag.
uint64_t HashStep() {
  constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ULL;  // FibonacciHash's
  uint64_t inverse = kMultiplier;                          // right in 3 bits; each round doubles them
  for (int i = 0; i < 5; ++i) inverse *= 2 - kMultiplier * inverse;
  REQUIRE(FibonacciHash(inverse) == 1);
  return inverse;
}

TEST_CASE("host table: keys of one home slot and one tag each find their own row, absent ones none") {
  constexpr size_t kRowBytes = 12, kKeys = 40;
  const uint64_t step = HashStep(), base = 0x1234567890abcdefULL;
  REQUIRE((FibonacciHash(base) & 0x1ffff) + kKeys < 0x20000);  // no carry into the slot's bits
  REQUIRE((FibonacciHash(base) & 0x1ffff) > 0);
  HostTable table(kRowBytes);
  table.Reset(kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) REQUIRE(table.Insert(base + i * step, RowOf(i, kRowBytes).data()).ok());
  REQUIRE(table.Insert(base + 7 * step, RowOf(700, kRowBytes).data()).ok());  // an overwrite past 7 probes
  CHECK(table.size() == kKeys);
  for (uint64_t i = 0; i < kKeys; ++i) {
    const uint8_t* row = table.Find(base + i * step);
    REQUIRE(row != nullptr);
    CHECK(std::memcmp(row, RowOf(i == 7 ? 700 : i, kRowBytes).data(), kRowBytes) == 0);
  }
  CHECK(table.Find(base + kKeys * step) == nullptr);  // its tag and home too, past the run of slots
  CHECK(table.Find(base - step) == nullptr);
}

TEST_CASE("host table: a pass smaller than the one before plans its own keys in the room kept; a larger one grows it") {
  constexpr size_t kRowBytes = 12;
  HostTable table(kRowBytes);
  for (const size_t keys : {size_t{300}, size_t{4}, size_t{2000}}) {
    CAPTURE(keys);
    table.Reset(keys);
    for (uint64_t k = 0; k < keys; ++k) REQUIRE(table.Insert(k + keys, RowOf(k + keys, kRowBytes).data()).ok());
    CHECK(table.Insert(1, RowOf(1, kRowBytes).data()).code() == Status::Code::kResourceExhausted);
    for (uint64_t k = 0; k < keys; ++k) {
      const uint8_t* row = table.Find(k + keys);
      REQUIRE(row != nullptr);
      CHECK(std::memcmp(row, RowOf(k + keys, kRowBytes).data(), kRowBytes) == 0);
    }
  }
}

TEST_CASE("host table: Reserve keeps the rows when the room suffices and drops them when it grows") {
  constexpr size_t kRowBytes = 12;
  HostTable table(kRowBytes);
  table.Reset(100);
  for (uint64_t k = 1; k <= 10; ++k) REQUIRE(table.Insert(k, RowOf(k, kRowBytes).data()).ok());
  table.Reserve(50);
  CHECK(table.size() == 10);
  for (uint64_t k = 1; k <= 10; ++k) {
    const uint8_t* row = table.Find(k);
    REQUIRE(row != nullptr);
    CHECK(std::memcmp(row, RowOf(k, kRowBytes).data(), kRowBytes) == 0);
  }
  table.Reserve(1000);
  CHECK(table.size() == 0);
  CHECK(table.Find(3) == nullptr);
}

}  // namespace
}  // namespace strata
