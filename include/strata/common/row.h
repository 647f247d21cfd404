// Row layout: the fixed-size record a key owns, shared by every tier and on-disk format.
//
//   +---------------------+----------------------------+-----------+-----------+
//   | embedding dim x f32 | optimizer state S x f32    | freq u32  | pass u32  |
//   +---------------------+----------------------------+-----------+-----------+
//
// The optimizer state has S floats, as the sparse optimizer needs (RowLayoutOf in
// model/model_spec.h): one a coordinate for Adagrad (its squared-gradient sums; SGD keeps
// them too, unread), one a row for row-wise Adagrad. freq counts the examples that touched
// the key; pass is the last pass that touched it. Tiers move rows as opaque bytes; only
// model/ and hbm/ interpret the floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {

struct RowLayout {
  int dim = 16;
  int state_floats = 16;

  RowLayout() = default;
  RowLayout(int embedding_dim, int state) : dim(embedding_dim), state_floats(state) {}

  size_t floats() const { return static_cast<size_t>(dim) + static_cast<size_t>(state_floats); }
  size_t bytes() const { return floats() * sizeof(float) + 2 * sizeof(uint32_t); }

  static float* Embedding(uint8_t* row) { return reinterpret_cast<float*>(row); }
  static const float* Embedding(const uint8_t* row) { return reinterpret_cast<const float*>(row); }
  float* State(uint8_t* row) const { return Embedding(row) + dim; }
  const float* State(const uint8_t* row) const { return Embedding(row) + dim; }

  uint32_t Freq(const uint8_t* row) const { return LoadU32(row + floats() * sizeof(float)); }
  uint32_t LastPass(const uint8_t* row) const { return LoadU32(row + floats() * sizeof(float) + 4); }
  void SetFreq(uint8_t* row, uint32_t v) const { StoreU32(row + floats() * sizeof(float), v); }
  void SetLastPass(uint8_t* row, uint32_t v) const { StoreU32(row + floats() * sizeof(float) + 4, v); }

 private:
  static uint32_t LoadU32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
  static void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
};

}  // namespace strata
