// PartArena (src/ssd/part_arena.h): a large arena grows where it lies within its
// reservation, keeping its bytes, and refuses to grow past it; a small one is a heap array
// that does not grow; moves hand the memory over.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "ssd/part_arena.h"

namespace strata::ssd {

TEST_CASE("ssd: a part arena grows in place within its reservation") {
  constexpr size_t kMiB = size_t{1} << 20;
  PartArena arena(3 * kMiB);
  REQUIRE(arena.data() != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(arena.data()) % (2 * kMiB) == 0);
  CHECK(arena.bytes() == 3 * kMiB);
  std::memset(arena.data(), 0x5a, arena.bytes());
  uint8_t* const at = arena.data();
  REQUIRE(arena.Grow(5 * kMiB + 7));
  CHECK(arena.data() == at);
  CHECK(arena.bytes() == 5 * kMiB + 7);
  CHECK(arena.data()[3 * kMiB - 1] == 0x5a);
  std::memset(arena.data() + 3 * kMiB, 0x33, 2 * kMiB + 7);  // the grown part is writable
  CHECK_FALSE(arena.Grow(6 * kMiB + 1));  // past the reservation of twice 3 MiB
  CHECK(arena.bytes() == 5 * kMiB + 7);
  CHECK(arena.Grow(kMiB));  // already that long
  CHECK(arena.bytes() == 5 * kMiB + 7);

  PartArena moved(std::move(arena));
  CHECK(arena.data() == nullptr);
  CHECK(arena.bytes() == 0);
  CHECK(moved.data() == at);
  CHECK(moved.data()[5 * kMiB + 6] == 0x33);
  arena = std::move(moved);
  CHECK(arena.data() == at);
}

TEST_CASE("ssd: a small part arena is a heap array that does not grow") {
  PartArena arena(1000);
  REQUIRE(arena.data() != nullptr);
  std::memset(arena.data(), 1, 1000);
  CHECK_FALSE(arena.Grow(600));
  CHECK(arena.bytes() == 1000);
  CHECK_FALSE(arena.Grow(2000));
  CHECK(arena.bytes() == 1000);
}

}  // namespace strata::ssd
