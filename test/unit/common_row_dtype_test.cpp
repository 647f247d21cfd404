// 16-bit rows (strata/common/half.h, RowLayout's dtype): bf16 and fp16 round to nearest,
// ties to even, keep infinities and NaN, overflow to infinity; ConvertRows narrows the
// embedding alone (state and counters are copied) and widens it back exactly; InitRow of a
// 16-bit model is the rounded f32 row.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "strata/common/half.h"
#include "strata/common/row.h"
#include "strata/model/optimizer.h"

namespace strata {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST_CASE("common: bf16 rounds to nearest even and keeps infinities and NaN") {
  CHECK(FloatToBf16(1.0f) == 0x3f80);
  CHECK(FloatToBf16(FromBits(0x3f808000u)) == 0x3f80);  // a tie: down to the even 0x3f80
  CHECK(FloatToBf16(FromBits(0x3f818000u)) == 0x3f82);  // a tie: up to the even 0x3f82
  CHECK(FloatToBf16(FromBits(0x3f808001u)) == 0x3f81);  // above the tie: up
  CHECK(FloatToBf16(-2.5f) == 0xc020);
  CHECK(FloatToBf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(FloatToBf16(FromBits(0x7f7fffffu)) == 0x7f80);  // the largest float overflows to inf
  CHECK(std::isnan(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(Bf16ToFloat(FloatToBf16(FromBits(0x7f800001u)))));  // a NaN with low bits only
  for (float x : {0.0f, 1.0f, -3.0f, 0.15625f, 1e30f}) CHECK(Bf16ToFloat(FloatToBf16(Bf16ToFloat(FloatToBf16(x)))) == Bf16ToFloat(FloatToBf16(x)));
}

TEST_CASE("common: fp16 rounds to nearest even, overflows to infinity and keeps subnormals") {
  CHECK(FloatToFp16(1.0f) == 0x3c00);
  CHECK(FloatToFp16(65504.0f) == 0x7bff);
  CHECK(FloatToFp16(65520.0f) == 0x7c00);               // halfway to the next: rounds to inf
  CHECK(FloatToFp16(1.0f + 0x1.0p-11f) == 0x3c00);      // a tie: to the even 0x3c00
  CHECK(FloatToFp16(1.0f + 3 * 0x1.0p-11f) == 0x3c02);  // a tie: to the even 0x3c02
  CHECK(Fp16ToFloat(FloatToFp16(0x1.0p-24f)) == 0x1.0p-24f);  // the smallest subnormal
  CHECK(Fp16ToFloat(FloatToFp16(0.1f)) == doctest::Approx(0.1f).epsilon(1e-3));
}

TEST_CASE("common: ConvertRows narrows the embedding only and widens it back exactly") {
  const RowLayout wide(4, 3), narrow(4, 3, RowDtype::kBf16);
  CHECK(narrow.bytes() == wide.bytes() - 8);
  std::vector<uint8_t> row(wide.bytes()), packed(narrow.bytes()), back(wide.bytes());
  const float emb[4] = {1.0f, FromBits(0x3f818000u), -0.3f, 1e-3f};
  std::memcpy(row.data(), emb, sizeof emb);
  const float state[3] = {0.25f, 7.0f, 1e-6f};
  std::memcpy(wide.State(row.data()), state, sizeof state);
  wide.SetFreq(row.data(), 9);
  wide.SetLastPass(row.data(), 4);
  ConvertRows(wide, row.data(), 1, narrow, packed.data());
  CHECK(narrow.Freq(packed.data()) == 9);
  CHECK(narrow.LastPass(packed.data()) == 4);
  CHECK(std::memcmp(narrow.State(packed.data()), state, sizeof state) == 0);
  ConvertRows(narrow, packed.data(), 1, wide, back.data());
  for (int c = 0; c < 4; ++c) CHECK(RowLayout::Embedding(back.data())[c] == Bf16ToFloat(FloatToBf16(emb[c])));
  CHECK(std::memcmp(back.data() + 16, row.data() + 16, wide.bytes() - 16) == 0);
}

TEST_CASE("common: InitRow of a bf16 model is the rounded f32 row") {
  ModelSpec spec;
  spec.embedding_dim = 8;
  const RowLayout wide = RowLayoutOf(spec);
  std::vector<uint8_t> f32(wide.bytes());
  InitRow(spec, 12345, f32.data());
  spec.row_dtype = RowDtype::kBf16;
  const RowLayout narrow = RowLayoutOf(spec);
  std::vector<uint8_t> bf16(narrow.bytes()), want(narrow.bytes());
  InitRow(spec, 12345, bf16.data());
  ConvertRows(wide, f32.data(), 1, narrow, want.data());
  CHECK(bf16 == want);
}

}  // namespace
}  // namespace strata
