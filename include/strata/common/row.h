// Row layout: the fixed-size record a key owns, shared by every tier and on-disk format.
//
//   +---------------------+----------------------------+-----------+-----------+
//   | embedding dim x E   | optimizer state S x f32    | freq u32  | pass u32  |
//   +---------------------+----------------------------+-----------+-----------+
//
// E is the row dtype (--row-dtype): f32, or a 16-bit float (bf16 or fp16, whose rows then
// need an even dim, so the state stays 4-byte aligned). The HBM-PS computes on f32 rows
// (dtype f32); rows of another dtype are widened when they enter it and rounded to nearest
// even when they leave it (ConvertRows), so every tier below, the wire and checkpoints hold
// the stored dtype. The optimizer state has S floats, as the sparse optimizer needs
// (RowLayoutOf in model/model_spec.h): one a coordinate for Adagrad (its squared-gradient
// sums; SGD keeps them too, unread), one a row for row-wise Adagrad. freq counts the
// examples that touched the key; pass is the last pass that touched it. Tiers move rows as
// opaque bytes; only model/, hbm/ and the converters interpret them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {

// The embedding's element type in stored rows.
enum class RowDtype : uint8_t { kFp32, kBf16, kFp16 };

// "fp32", "bf16", "fp16": the flag and checkpoint name.
inline const char* RowDtypeName(RowDtype t) {
  return t == RowDtype::kBf16 ? "bf16" : t == RowDtype::kFp16 ? "fp16" : "fp32";
}

struct RowLayout {
  int dim = 16;
  int state_floats = 16;
  RowDtype dtype = RowDtype::kFp32;

  RowLayout() = default;
  RowLayout(int embedding_dim, int state, RowDtype t = RowDtype::kFp32)
      : dim(embedding_dim), state_floats(state), dtype(t) {}

  // Floats of an f32 row's embedding and state, which lie contiguous from its start.
  size_t floats() const { return static_cast<size_t>(dim) + static_cast<size_t>(state_floats); }
  size_t element_bytes() const { return dtype == RowDtype::kFp32 ? 4 : 2; }
  size_t embedding_bytes() const { return static_cast<size_t>(dim) * element_bytes(); }
  // Where freq and pass start.
  size_t counters_offset() const { return embedding_bytes() + static_cast<size_t>(state_floats) * sizeof(float); }
  size_t bytes() const { return counters_offset() + 2 * sizeof(uint32_t); }

  // The embedding of an f32 row (dtype kFp32 only; else LoadEmbedding / StoreEmbedding).
  static float* Embedding(uint8_t* row) { return reinterpret_cast<float*>(row); }
  static const float* Embedding(const uint8_t* row) { return reinterpret_cast<const float*>(row); }
  float* State(uint8_t* row) const { return reinterpret_cast<float*>(row + embedding_bytes()); }
  const float* State(const uint8_t* row) const { return reinterpret_cast<const float*>(row + embedding_bytes()); }

  // The embedding of a row of any dtype as floats (dim), and back, rounded to nearest even
  // (row_codec.cpp).
  void LoadEmbedding(const uint8_t* row, float* out) const;
  void StoreEmbedding(const float* in, uint8_t* row) const;
  // The embedding, then the state, as floats (out: floats()).
  void LoadFloats(const uint8_t* row, float* out) const {
    LoadEmbedding(row, out);
    std::memcpy(out + dim, row + embedding_bytes(), static_cast<size_t>(state_floats) * sizeof(float));
  }

  uint32_t Freq(const uint8_t* row) const { return LoadU32(row + counters_offset()); }
  uint32_t LastPass(const uint8_t* row) const { return LoadU32(row + counters_offset() + 4); }
  void SetFreq(uint8_t* row, uint32_t v) const { StoreU32(row + counters_offset(), v); }
  void SetLastPass(uint8_t* row, uint32_t v) const { StoreU32(row + counters_offset() + 4, v); }

 private:
  static uint32_t LoadU32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
  static void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
};

// Rows (n) from layout `from` into layout `to` (the same dim and state, another dtype):
// the embedding converted (rounded to nearest even when narrowed), state and counters copied.
void ConvertRows(const RowLayout& from, const uint8_t* in, size_t n, const RowLayout& to, uint8_t* out);

}  // namespace strata
