// The dense-feature transform declared in batch.h, shared by the reader and the generator,
// and its table-driven integer form (dense_table.h).
#include "strata/data/batch.h"

#include <cmath>

#include "data/dense_table.h"

namespace strata {

void AppendExamples(const Batch& src, int first, int count, Batch* dst) {
  const size_t S = static_cast<size_t>(src.num_slots), D = static_cast<size_t>(src.num_dense);
  const size_t from = static_cast<size_t>(first), to = from + static_cast<size_t>(count);
  const uint32_t key_begin = src.offsets[from * S], key_end = src.offsets[to * S];
  const uint32_t shift = static_cast<uint32_t>(dst->keys.size()) - key_begin;  // mod 2^32
  dst->keys.insert(dst->keys.end(), src.keys.begin() + key_begin, src.keys.begin() + key_end);
  for (size_t j = from * S + 1; j <= to * S; ++j) dst->offsets.push_back(src.offsets[j] + shift);
  dst->dense.insert(dst->dense.end(), src.dense.begin() + from * D, src.dense.begin() + to * D);
  dst->labels.insert(dst->labels.end(), src.labels.begin() + first, src.labels.begin() + first + count);
  dst->num_examples += count;
}

float TransformDense(double x) {
  double y = std::log1p(std::fabs(x));
  return static_cast<float>(x < 0 ? -y : y);
}

namespace data_internal {
namespace {

constexpr int kTableSize = 4096;  // covers about 98% of Criteo's integer fields

struct DenseTable {
  float v[kTableSize];
  DenseTable() {
    for (int i = 0; i < kTableSize; ++i) v[i] = TransformDense(i);
  }
};

}  // namespace

float TransformDenseInt(int64_t x) {
  static const DenseTable table;
  if (x >= 0 && x < kTableSize) return table.v[x];
  return TransformDense(static_cast<double>(x));
}

}  // namespace data_internal
}  // namespace strata
