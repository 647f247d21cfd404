// RowLayout's embedding conversions between f32 and the 16-bit row dtypes.
#include <cassert>
#include <vector>

#include "strata/common/half.h"
#include "strata/common/row.h"

namespace strata {

void RowLayout::LoadEmbedding(const uint8_t* row, float* out) const {
  if (dtype == RowDtype::kFp32) {
    std::memcpy(out, row, embedding_bytes());
    return;
  }
  for (int c = 0; c < dim; ++c) {
    uint16_t h;
    std::memcpy(&h, row + 2 * c, sizeof h);
    out[c] = dtype == RowDtype::kBf16 ? Bf16ToFloat(h) : Fp16ToFloat(h);
  }
}

void RowLayout::StoreEmbedding(const float* in, uint8_t* row) const {
  if (dtype == RowDtype::kFp32) {
    std::memcpy(row, in, embedding_bytes());
    return;
  }
  for (int c = 0; c < dim; ++c) {
    const uint16_t h = dtype == RowDtype::kBf16 ? FloatToBf16(in[c]) : FloatToFp16(in[c]);
    std::memcpy(row + 2 * c, &h, sizeof h);
  }
}

void ConvertRows(const RowLayout& from, const uint8_t* in, size_t n, const RowLayout& to, uint8_t* out) {
  assert(from.dim == to.dim && from.state_floats == to.state_floats);
  const size_t tail = from.bytes() - from.embedding_bytes();  // state and counters
  std::vector<float> emb(static_cast<size_t>(from.dim));
  for (size_t i = 0; i < n; ++i, in += from.bytes(), out += to.bytes()) {
    from.LoadEmbedding(in, emb.data());
    to.StoreEmbedding(emb.data(), out);
    std::memcpy(out + to.embedding_bytes(), in + from.embedding_bytes(), tail);
  }
}

}  // namespace strata
