// The dense-feature transform declared in batch.h, shared by the reader and the generator,
// and its table-driven integer form (dense_table.h).
#include "strata/data/batch.h"

#include <cmath>

#include "data/dense_table.h"

namespace strata {

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
