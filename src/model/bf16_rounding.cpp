// RoundToBf16 (model/bf16_rounding.h), compiled with -fopenmp for its split.
#include "model/bf16_rounding.h"

#include "model/omp_parts.h"
#include "strata/model/update_kernels.h"

namespace strata {

const uint16_t* RoundToBf16(const float* x, size_t n, HugeVector<uint16_t>* to, int threads) {
  if (to->size() < n) to->resize(n);
  const auto to_bf16 = Kernels().to_bf16;
  uint16_t* out = to->data();
  InParts(threads, n, size_t{1} << 16, [&](size_t begin, size_t end) { to_bf16(out + begin, x + begin, end - begin); });
  return out;
}

}  // namespace strata
