// TransformDense for integer inputs through a table of the small values most counts take.
// Returns exactly TransformDense(x); thread-safe (the table is built once, on first use).
#pragma once

#include <cstdint>

namespace strata::data_internal {

float TransformDenseInt(int64_t x);

}  // namespace strata::data_internal
