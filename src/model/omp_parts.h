// InParts: a range split in contiguous parts over an OpenMP team, for the dense model's
// elementwise passes (the MLP's masks and the bf16 roundings). Only files compiled with
// -fopenmp include it (see the Makefile); without it the pragma is ignored and the parts
// run in turn on the caller's thread, with the same result.
#pragma once

#include <algorithm>
#include <cstddef>

namespace strata {

// body(begin, end) over [0, n) in contiguous parts, one for each of up to `threads`
// OpenMP threads (the team the products run on), parts of at least `grain`. Each part is
// computed as one thread alone would, so the result does not depend on the split.
template <typename Body>
void InParts(int threads, size_t n, size_t grain, const Body& body) {
  const int parts = static_cast<int>(std::max<size_t>(1, std::min<size_t>(threads, n / grain)));
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
  for (int p = 0; p < parts; ++p) body(n * p / parts, n * (p + 1) / parts);
}

}  // namespace strata
