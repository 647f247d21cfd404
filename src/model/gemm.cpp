// Gemm through OnednnGemm (strata/model/gemm.h).
#include "strata/model/gemm.h"

#include "model/onednn_gemm.h"

namespace strata {

namespace {

OnednnGemm& Library(GemmContext* ctx) {
  if (!ctx->onednn) ctx->onednn = std::make_shared<OnednnGemm>(ctx->threads);
  return *ctx->onednn;
}

}  // namespace

void Gemm(DensePrecision precision, GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K,
          GemmOperand A, GemmOperand B, bool accumulate, float* C) {
  Library(ctx).Run(precision, trans_a, trans_b, M, N, K, A, B, accumulate, C);
}

void GemmBiasRelu(DensePrecision precision, GemmContext* ctx, int M, int N, int K, GemmOperand A,
                  GemmOperand B, const float* bias, float* C) {
  Library(ctx).RunBiasRelu(precision, M, N, K, A, B, bias, C);
}

void GemmBiasReluToBf16(GemmContext* ctx, int M, int N, int K, GemmOperand A, GemmOperand B, const float* bias,
                        uint16_t* C16) {
  Library(ctx).RunBiasReluToBf16(M, N, K, A, B, bias, C16);
}

void GemmToBf16(GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A, GemmOperand B,
                uint16_t* C16) {
  Library(ctx).RunToBf16(trans_a, trans_b, M, N, K, A, B, C16);
}

}  // namespace strata
