// 16-bit floats of stored rows (--row-dtype): bf16 (fp32's exponent, 8 bits of mantissa)
// and IEEE fp16 (5-bit exponent, 11 bits of mantissa), as raw uint16 bits. Conversion to
// 16 bits rounds to nearest, ties to even, the same on every machine: bf16 by integer
// arithmetic on the bits, fp16 by the compiler's _Float16 conversion (IEEE round to
// nearest even, overflow to infinity, subnormals kept). NaN stays NaN. Thread-safe (pure).
#pragma once

#include <cstdint>
#include <cstring>

namespace strata {

inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

inline float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t FloatToFp16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

inline float Fp16ToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

}  // namespace strata
