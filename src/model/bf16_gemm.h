// Bf16Gemm: the MLP's matrix products with bf16 operands and fp32 accumulation, through
// oneDNN's matmul, for --dense-precision bf16. The caller's fp32 operands are rounded to
// bf16 (nearest, ties to even, as strata/common/half.h) into buffers this object owns; the
// product is written (or added) in fp32. oneDNN picks its kernel for the CPU at run time
// (AVX512-BF16 or AMX); Supported() says whether this CPU has bf16 instructions at all, and
// callers fall back to fp32 where it has not.
//
// Results depend only on the operands and shapes, never on the thread count (the products
// are split over M and N, not over the sum): the unit tests check it, since topology
// independence rests on it.
//
// Thread safety: one Bf16Gemm per calling thread (its buffers and oneDNN stream); distinct
// objects may run concurrently. Primitives are created once per shape and kept.
#pragma once

#include <memory>

namespace strata {

class Bf16Gemm {
 public:
  // True when the CPU executes bf16 dot products natively (AVX512-BF16 or AMX-BF16).
  static bool Supported();

  // threads: OpenMP threads oneDNN may use per product.
  explicit Bf16Gemm(int threads);
  ~Bf16Gemm();
  Bf16Gemm(const Bf16Gemm&) = delete;
  Bf16Gemm& operator=(const Bf16Gemm&) = delete;

  // C (M, N) = op(A) op(B), or C += op(A) op(B) when accumulate. All row-major and packed:
  // A is (M, K), or (K, M) when trans_a; B is (K, N), or (N, K) when trans_b.
  void Run(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, bool accumulate,
           float* C);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
