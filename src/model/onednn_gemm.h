// OnednnGemm: the dense model's matrix products through oneDNN's matmul, in fp32 or with
// bf16 operands (--dense-precision bf16) and fp32 accumulation. For bf16 an operand's
// rounding is read where the caller holds one (GemmOperand); otherwise its fp32 values
// are rounded (nearest, ties to even: model/bf16_rounding.h) into buffers this object
// owns, on its threads. fp32 operands are read in place. The product is written (or added)
// in fp32, or for a bf16 product that feeds another, rounded to bf16 as it is written.
// oneDNN picks its kernels for the CPU at run time (AVX2, AVX-512, AVX512-BF16 or AMX);
// Bf16Supported() says whether this CPU has bf16 instructions at all, and callers fall back
// to fp32 where it has not.
//
// Results depend only on the operands, shapes and precision, never on the thread count (the
// products are split over M and N, not over the sum): the unit tests check it, since
// topology independence rests on it.
//
// Thread safety: one OnednnGemm per calling thread (its buffers and oneDNN stream); distinct
// objects may run concurrently. Primitives are created once per shape and kept.
#pragma once

#include <memory>

#include "strata/model/gemm.h"

namespace strata {

class OnednnGemm {
 public:
  // True when the CPU executes bf16 dot products natively (AVX512-BF16 or AMX-BF16).
  static bool Bf16Supported();

  // threads: OpenMP threads oneDNN may use per product.
  explicit OnednnGemm(int threads);
  ~OnednnGemm();
  OnednnGemm(const OnednnGemm&) = delete;
  OnednnGemm& operator=(const OnednnGemm&) = delete;

  // C (M, N) = op(A) op(B), or C += op(A) op(B) when accumulate. All row-major and packed:
  // A is (M, K), or (K, M) when trans_a; B is (K, N), or (N, K) when trans_b. kBf16
  // REQUIRES Bf16Supported().
  void Run(DensePrecision precision, bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A,
           GemmOperand B, bool accumulate, float* C);

  // C (M, N) = max(0, A B + bias): A (M, K), B (K, N), bias (N) added to every row, in one
  // pass over C. The same bits as Run into C filled with the bias with accumulate, then a
  // ReLU.
  void RunBiasRelu(DensePrecision precision, int M, int N, int K, GemmOperand A, GemmOperand B,
                   const float* bias, float* C);

  // RunBiasRelu in bf16 with its result rounded (nearest, ties to even) as it is written:
  // C16 holds the rounding of what RunBiasRelu would write. REQUIRES Bf16Supported().
  void RunBiasReluToBf16(int M, int N, int K, GemmOperand A, GemmOperand B, const float* bias, uint16_t* C16);

  // Run in bf16 without accumulation, its result rounded as it is written into C16.
  // REQUIRES Bf16Supported().
  void RunToBf16(bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A, GemmOperand B, uint16_t* C16);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
