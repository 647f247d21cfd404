// HostTable: rows found by key after inserts and overwrites, absent keys, a full table's
// error, Reset, smaller and larger than the pass before, and Reserve.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "hbm/host_table.h"

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
