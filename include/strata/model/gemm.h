// Gemm: the dense model's matrix products (the MLP's and the cross network's), in fp32 or,
// for DensePrecision::kBf16, with bf16 operands and fp32 accumulation and output, through
// oneDNN's matmul (model/onednn_gemm.h), which a GemmContext makes at its first product. It
// does not split a sum over threads, so results do not depend on the thread count. Thread
// safety: a GemmContext belongs to one caller at a time.
#pragma once

#include <cstdint>
#include <memory>

namespace strata {

class OnednnGemm;

// The type of the dense model's matrix products' operands (--dense-precision).
enum class DensePrecision { kFp32, kBf16 };

struct GemmContext {
  int threads = 1;                     // oneDNN's threads a product
  std::shared_ptr<OnednnGemm> onednn;  // made at the first product
};

// A product's operand: its fp32 values and, where the caller keeps one because several
// products read it, their bf16 rounding (FloatToBf16 of each), which kBf16 products then
// read instead of rounding the values again. A bare pointer converts to one without.
struct GemmOperand {
  GemmOperand(const float* v, const uint16_t* rounded = nullptr) : values(v), bf16(rounded) {}  // NOLINT
  const float* values;
  const uint16_t* bf16;
};

// C (M, N) = op(A) op(B), or C += op(A) op(B) when accumulate. Row-major and packed: A is
// (M, K), or (K, M) when trans_a; B is (K, N), or (N, K) when trans_b. kBf16 REQUIRES
// OnednnGemm::Bf16Supported().
void Gemm(DensePrecision precision, GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K,
          GemmOperand A, GemmOperand B, bool accumulate, float* C);

// A layer's forward in one pass over C: C (M, N) = max(0, A (M, K) B (K, N) + bias (N)).
void GemmBiasRelu(DensePrecision precision, GemmContext* ctx, int M, int N, int K, GemmOperand A,
                  GemmOperand B, const float* bias, float* C);

// GemmBiasRelu in bf16 for a layer whose output only another bf16 product reads: C16 (M, N)
// gets the bf16 rounding (nearest, ties to even) of what GemmBiasRelu would write, made as
// the product writes it. REQUIRES OnednnGemm::Bf16Supported().
void GemmBiasReluToBf16(GemmContext* ctx, int M, int N, int K, GemmOperand A, GemmOperand B, const float* bias,
                        uint16_t* C16);

// C16 (M, N) = the bf16 rounding of op(A) op(B) in bf16, made as the product writes it.
// REQUIRES OnednnGemm::Bf16Supported().
void GemmToBf16(GemmContext* ctx, bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A, GemmOperand B,
                uint16_t* C16);

}  // namespace strata
