// BufferPool (strata/common/buffer_pool.h): Take hands out a kept buffer (the smallest with
// room, else a new one in place of the largest) sized as asked, Give keeps at most the
// pool's count, dropping the smallest, and an empty buffer is not kept.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "strata/common/buffer_pool.h"

namespace strata {
namespace {

// A buffer of at least `capacity` bytes, and where its bytes start.
std::pair<std::string, const char*> Buffer(size_t capacity) {
  std::string s;
  s.reserve(capacity);
  const char* at = s.data();
  return {std::move(s), at};
}

TEST_CASE("buffer pool: the smallest kept buffer with room, sized as asked") {
  BufferPool pool(3);
  auto [small, small_at] = Buffer(1000);
  auto [large, large_at] = Buffer(100000);
  pool.Give(std::move(large));
  pool.Give(std::move(small));
  CHECK(pool.kept() == 2);
  std::string got = pool.Take(800);
  CHECK(got.size() == 800);
  CHECK(got.data() == small_at);
  got = pool.Take(5000);
  CHECK(got.size() == 5000);
  CHECK(got.data() == large_at);
  CHECK(pool.kept() == 0);
}

TEST_CASE("buffer pool: with none large enough, a new one with an eighth to spare replaces the largest") {
  BufferPool pool;
  pool.Give(Buffer(1000).first);
  pool.Give(Buffer(2000).first);
  const std::string got = pool.Take(8000);
  CHECK(got.size() == 8000);
  CHECK(got.capacity() >= 9000);
  CHECK(pool.kept() == 1);
  CHECK(pool.Take(1500).capacity() < 8000);  // made in place of the 1000-byte one
  CHECK(pool.kept() == 0);
  CHECK(pool.Take(10).size() == 10);  // an empty pool makes a new buffer
}

TEST_CASE("buffer pool: past its count the smallest buffer goes; an empty one is never kept") {
  BufferPool pool(2);
  auto [a, a_at] = Buffer(3000);
  auto [b, b_at] = Buffer(1000);
  auto [c, c_at] = Buffer(2000);
  pool.Give(std::move(a));
  pool.Give(std::move(b));
  pool.Give(std::move(c));
  pool.Give(std::string());
  CHECK(pool.kept() == 2);
  const std::string first = pool.Take(1), second = pool.Take(1);
  CHECK(first.data() == c_at);  // the smaller of the two kept
  CHECK(second.data() == a_at);
  CHECK(pool.kept() == 0);
}

}  // namespace
}  // namespace strata
