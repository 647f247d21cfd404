// Gemm: the dense model's matrix products (the MLP's and the cross network's), in fp32
// through CBLAS (OpenBLAS) or, for DensePrecision::kBf16, through Bf16Gemm (bf16 operands,
// fp32 accumulation and output; model/bf16_gemm.h), which a GemmContext makes at its first
// bf16 product. Neither splits a sum over threads, so results do not depend on the thread
// count. Thread safety: a GemmContext belongs to one caller at a time.
#pragma once

#include <memory>

namespace strata {

class Bf16Gemm;

// The type of the dense model's matrix products' operands (--dense-precision).
enum class DensePrecision { kFp32, kBf16 };

struct GemmContext {
  int threads = 1;                  // oneDNN's threads for bf16 products
  std::shared_ptr<Bf16Gemm> bf16;   // made at the first bf16 product
};

// C (M, N) = op(A) op(B), or C += op(A) op(B) when accumulate. Row-major and packed: A is
// (M, K), or (K, M) when trans_a; B is (K, N), or (N, K) when trans_b. kBf16 REQUIRES
// Bf16Gemm::Supported().
void Gemm(DensePrecision precision, GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K,
          const float* A, const float* B, bool accumulate, float* C);

}  // namespace strata
