// Gemm through OnednnGemm (strata/model/gemm.h).
#include "strata/model/gemm.h"

#include "model/onednn_gemm.h"

namespace strata {

void Gemm(DensePrecision precision, GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K,
          const float* A, const float* B, bool accumulate, float* C) {
  if (!ctx->onednn) ctx->onednn = std::make_shared<OnednnGemm>(ctx->threads);
  ctx->onednn->Run(precision, trans_a, trans_b, M, N, K, A, B, accumulate, C);
}

}  // namespace strata
