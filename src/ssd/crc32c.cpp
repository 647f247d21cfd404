// crc32c: hardware path (SSE4.2, eight bytes a step) with a table fallback.
#include "ssd/crc32c.h"

#include <array>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace strata::ssd {
namespace {

#if !defined(__SSE4_2__)
constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();
#else
uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
#endif

}  // namespace

uint32_t Crc32c(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#if defined(__SSE4_2__)
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) c64 = _mm_crc32_u64(c64, Load64(p));
  c = static_cast<uint32_t>(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
#else
  for (; n > 0; --n, ++p) c = kTable[(c ^ *p) & 0xFF] ^ (c >> 8);
#endif
  return ~c;
}

namespace {

#if defined(__SSE4_2__)
// Crc32c(0, data[k], n) for k < 4, the four chains interleaved.
void Crc32cFour(const uint8_t* const* data, size_t n, uint32_t* crcs) {
  uint64_t c0 = 0xFFFFFFFFu, c1 = c0, c2 = c0, c3 = c0;
  size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    c0 = _mm_crc32_u64(c0, Load64(data[0] + at));
    c1 = _mm_crc32_u64(c1, Load64(data[1] + at));
    c2 = _mm_crc32_u64(c2, Load64(data[2] + at));
    c3 = _mm_crc32_u64(c3, Load64(data[3] + at));
  }
  const uint64_t chains[4] = {c0, c1, c2, c3};
  for (int k = 0; k < 4; ++k) {
    auto c = static_cast<uint32_t>(chains[k]);
    for (size_t b = at; b < n; ++b) c = _mm_crc32_u8(c, data[k][b]);
    crcs[k] = ~c;
  }
}
#endif

}  // namespace

void Crc32cEach(const uint8_t* const* data, size_t count, size_t n, uint32_t* crcs) {
  size_t i = 0;
#if defined(__SSE4_2__)
  for (; i + 4 <= count; i += 4) Crc32cFour(data + i, n, crcs + i);
#endif
  for (; i < count; ++i) crcs[i] = Crc32c(0, data[i], n);
}

}  // namespace strata::ssd
