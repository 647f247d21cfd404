// Gemm's dispatch between CBLAS and Bf16Gemm (strata/model/gemm.h).
#include "strata/model/gemm.h"

#include <cblas.h>

#include "model/bf16_gemm.h"

namespace strata {

void Gemm(DensePrecision precision, GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K,
          const float* A, const float* B, bool accumulate, float* C) {
  if (precision == DensePrecision::kBf16) {
    if (!ctx->bf16) ctx->bf16 = std::make_shared<Bf16Gemm>(ctx->threads);
    ctx->bf16->Run(trans_a, trans_b, M, N, K, A, B, accumulate, C);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
              1.0f, A, trans_a ? M : K, B, trans_b ? K : N, accumulate ? 1.0f : 0.0f, C, N);
}

}  // namespace strata
