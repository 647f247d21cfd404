// RoundToBf16: the bf16 operands of the dense model's products. fp32 values are rounded to
// nearest, ties to even (Kernels().to_bf16, as strata/common/half.h), split over an OpenMP
// team; each value's rounding is its own, so the result does not depend on the split.
// Thread safety: callers own the buffers they pass.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/common/huge_pages.h"

namespace strata {

// x's n values rounded into *to (grown as needed) on up to `threads` OpenMP threads; returns
// to->data().
const uint16_t* RoundToBf16(const float* x, size_t n, HugeVector<uint16_t>* to, int threads);

}  // namespace strata
