// UpdateKernels: the host's loops over spans of coordinates (sum pooling and its scatter,
// from fp32 or bf16 gradients, sparse Adagrad rows, the dense Adam step, the rounding of
// bf16 products' operands, the ReLU mask of gradients in fp32 and bf16), each compiled for
// the build's baseline and for AVX2 and AVX-512 from one source (the optimizers: the
// per-coordinate functions of update_math.h), without FMA contraction, so every variant
// rounds as the baseline does, bit for bit (the CUDA kernels too).
// Kernels() is the set for DetectedIsa() (strata/common/cpu_isa.h). Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/common/cpu_isa.h"
#include "strata/model/update_math.h"

namespace strata {

struct UpdateKernels {
  // Sum pooling of one example's slots: slot s's occurrences are ids[offsets[s] ..
  // offsets[s + 1]), and x[s * dim + c] = +0 + rows[ids[offsets[s]]][c] + ... in j order, for
  // s < slots and c < dim (rows[k]: the embedding of the batch's key k). x overlaps no row.
  void (*pool_example)(float* x, const uint8_t* const* rows, const uint32_t* ids, const uint32_t* offsets,
                       size_t slots, size_t dim);
  // Its backward: grads[ids[j] * dim + c] += d[s * dim + c] for s < slots and j in
  // [offsets[s], offsets[s + 1]) in order, c < dim. d overlaps no row of grads; ids may repeat.
  void (*scatter_example)(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots, const float* d,
                          size_t dim);
  // The same from a gradient of bf16 roundings: adds Bf16ToFloat(d[s * dim + c]).
  void (*scatter_example_bf16)(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots,
                               const uint16_t* d, size_t dim);
  // AdagradUpdate(&w[i], &s[i], g[i], lr) for i < n. The spans do not overlap.
  void (*adagrad)(float* w, float* s, const float* g, size_t n, float lr);
  // AdamUpdate(&w[i], &m[i], &v[i], g[i], k) for i < n. The spans do not overlap.
  void (*adam)(float* w, float* m, float* v, const float* g, size_t n, const AdamStepScalars& k);
  // to[i] = FloatToBf16(from[i]) (strata/common/half.h) for i < n.
  void (*to_bf16)(uint16_t* to, const float* from, size_t n);
  // One row of a ReLU's backward: d[i] = (a[i] > 0 ? d[i] : 0) and db[i] += d[i] for i < n.
  // The spans do not overlap.
  void (*relu_mask)(const float* a, float* d, float* db, size_t n);
  // The same in bf16: d[i] = (a[i] > 0 ? d[i] : 0) and db[i] += d[i],
  // the values those of the bf16 bits (Bf16ToFloat), for i < n. The spans do not overlap.
  void (*relu_mask_bf16)(const uint16_t* a, uint16_t* d, float* db, size_t n);
};

// The variant for isa. REQUIRES: the CPU runs it (SupportedIsas).
const UpdateKernels& UpdateKernelsFor(CpuIsa isa);
// The variant for DetectedIsa().
const UpdateKernels& Kernels();

}  // namespace strata
