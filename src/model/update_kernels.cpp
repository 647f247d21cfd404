// UpdateKernels: one loop body per kernel, inlined into a function per instruction set
// (GCC's target attribute), where the compiler vectorizes it for that set; and the bf16
// rounding in AVX512-BF16's own instruction.
#include "strata/model/update_kernels.h"

#include <immintrin.h>

#include "strata/common/half.h"

namespace strata {
namespace {

#define STRATA_ALWAYS_INLINE inline __attribute__((always_inline))

// Pooling and its scatter walk a row in blocks of kWidth columns (dim a multiple of it): for
// the usual dims, multiples of 16, blocks of 16 fill whole vector registers with no loop
// over a remainder, which a batch's hundred thousand short rows would pay once each.
template <size_t kWidth>
STRATA_ALWAYS_INLINE void SumRowsOf(float* __restrict x, const uint8_t* const* rows, const uint32_t* ids, size_t n,
                                    size_t dim) {
  for (size_t c0 = 0; c0 < dim; c0 += kWidth) {
    for (size_t c = c0; c < c0 + kWidth; ++c) x[c] = 0.0f;
  }
  for (size_t j = 0; j < n; ++j) {
    const float* __restrict row = reinterpret_cast<const float*>(rows[ids[j]]);
    for (size_t c0 = 0; c0 < dim; c0 += kWidth) {
      for (size_t c = c0; c < c0 + kWidth; ++c) x[c] += row[c];
    }
  }
}

// Each slot of one example: one call a batch's example, not one a slot (a hundred
// thousand slots a batch, most of one occurrence).
template <size_t kWidth>
STRATA_ALWAYS_INLINE void PoolExampleOf(float* __restrict x, const uint8_t* const* rows, const uint32_t* ids,
                                        const uint32_t* offsets, size_t slots, size_t dim) {
  for (size_t s = 0; s < slots; ++s) {
    SumRowsOf<kWidth>(x + s * dim, rows, ids + offsets[s], offsets[s + 1] - offsets[s], dim);
  }
}

STRATA_ALWAYS_INLINE void PoolExampleLoop(float* __restrict x, const uint8_t* const* rows, const uint32_t* ids,
                                          const uint32_t* offsets, size_t slots, size_t dim) {
  if (dim % 16 == 0) return PoolExampleOf<16>(x, rows, ids, offsets, slots, dim);
  PoolExampleOf<1>(x, rows, ids, offsets, slots, dim);
}

// The scatter's gradient d as fp32 (D = float) or as bf16 roundings (D = uint16_t), whose
// values it adds.
STRATA_ALWAYS_INLINE float ValueOf(float v) { return v; }
STRATA_ALWAYS_INLINE float ValueOf(uint16_t v) { return Bf16ToFloat(v); }

template <size_t kWidth, typename D>
STRATA_ALWAYS_INLINE void ScatterAddOf(float* grads, const uint32_t* ids, size_t n, const D* __restrict d,
                                       size_t dim) {
  for (size_t j = 0; j < n; ++j) {
    float* __restrict g = grads + static_cast<size_t>(ids[j]) * dim;
    for (size_t c0 = 0; c0 < dim; c0 += kWidth) {
      for (size_t c = c0; c < c0 + kWidth; ++c) g[c] += ValueOf(d[c]);
    }
  }
}

template <size_t kWidth, typename D>
STRATA_ALWAYS_INLINE void ScatterExampleOf(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots,
                                           const D* __restrict d, size_t dim) {
  for (size_t s = 0; s < slots; ++s) {
    ScatterAddOf<kWidth>(grads, ids + offsets[s], offsets[s + 1] - offsets[s], d + s * dim, dim);
  }
}

template <typename D>
STRATA_ALWAYS_INLINE void ScatterExampleLoop(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots,
                                             const D* __restrict d, size_t dim) {
  if (dim % 16 == 0) return ScatterExampleOf<16>(grads, ids, offsets, slots, d, dim);
  ScatterExampleOf<1>(grads, ids, offsets, slots, d, dim);
}

STRATA_ALWAYS_INLINE void AdagradLoop(float* __restrict w, float* __restrict s, const float* __restrict g, size_t n,
                                      float lr) {
  for (size_t i = 0; i < n; ++i) AdagradUpdate(&w[i], &s[i], g[i], lr);
}

STRATA_ALWAYS_INLINE void AdamLoop(float* __restrict w, float* __restrict m, float* __restrict v,
                                   const float* __restrict g, size_t n, const AdamStepScalars& k) {
  const AdamStepScalars scalars = k;  // a copy the compiler knows no store changes
  for (size_t i = 0; i < n; ++i) AdamUpdate(&w[i], &m[i], &v[i], g[i], scalars);
}

STRATA_ALWAYS_INLINE void ToBf16Loop(uint16_t* __restrict to, const float* __restrict from, size_t n) {
  for (size_t i = 0; i < n; ++i) to[i] = FloatToBf16(from[i]);
}

STRATA_ALWAYS_INLINE void ReluMaskLoop(const float* __restrict a, float* __restrict d, float* __restrict db, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = a[i] > 0.0f ? d[i] : 0.0f;
    d[i] = v;
    db[i] += v;
  }
}

STRATA_ALWAYS_INLINE void ReluMaskBf16Loop(const uint16_t* __restrict a, uint16_t* __restrict d,
                                           float* __restrict db, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t v = Bf16ToFloat(a[i]) > 0.0f ? d[i] : uint16_t{0};
    d[i] = v;
    db[i] += Bf16ToFloat(v);
  }
}

// The kernels compiled for one instruction set: `target` is GCC's target attribute.
#define STRATA_UPDATE_KERNELS(name, target)                                                          \
  target void name##PoolExample(float* x, const uint8_t* const* rows, const uint32_t* ids, const uint32_t* offsets, \
                                size_t slots, size_t dim) {                                          \
    PoolExampleLoop(x, rows, ids, offsets, slots, dim);                                              \
  }                                                                                                  \
  target void name##ScatterExample(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots, \
                                   const float* d, size_t dim) {                                     \
    ScatterExampleLoop(grads, ids, offsets, slots, d, dim);                                          \
  }                                                                                                  \
  target void name##ScatterExampleBf16(float* grads, const uint32_t* ids, const uint32_t* offsets, size_t slots, \
                                       const uint16_t* d, size_t dim) {                              \
    ScatterExampleLoop(grads, ids, offsets, slots, d, dim);                                          \
  }                                                                                                  \
  target void name##Adagrad(float* w, float* s, const float* g, size_t n, float lr) {                \
    AdagradLoop(w, s, g, n, lr);                                                                     \
  }                                                                                                  \
  target void name##Adam(float* w, float* m, float* v, const float* g, size_t n, const AdamStepScalars& k) { \
    AdamLoop(w, m, v, g, n, k);                                                                      \
  }                                                                                                  \
  target void name##ToBf16(uint16_t* to, const float* from, size_t n) { ToBf16Loop(to, from, n); }   \
  target void name##ReluMask(const float* a, float* d, float* db, size_t n) { ReluMaskLoop(a, d, db, n); } \
  target void name##ReluMaskBf16(const uint16_t* a, uint16_t* d, float* db, size_t n) {              \
    ReluMaskBf16Loop(a, d, db, n);                                                                   \
  }                                                                                                  \
  const UpdateKernels k##name{name##PoolExample, name##ScatterExample,                                \
                              name##ScatterExampleBf16, name##Adagrad, name##Adam, name##ToBf16,     \
                              name##ReluMask, name##ReluMaskBf16};

STRATA_UPDATE_KERNELS(Baseline, )
STRATA_UPDATE_KERNELS(Avx2, __attribute__((target("avx2"))))
STRATA_UPDATE_KERNELS(Avx512, __attribute__((target("avx512f,avx512bw"))))

// VCVTNEPS2BF16 rounds to nearest even and quiets NaNs as FloatToBf16 does, three times as
// fast as the integer arithmetic, but reads a denormal input as zero: a block of 16 that
// holds one is rounded by the loop instead.
__attribute__((target("avx512f,avx512bf16"))) void Avx512Bf16ToBf16(uint16_t* to, const float* from, size_t n) {
  const __m512i exponent = _mm512_set1_epi32(0x7f800000), mantissa = _mm512_set1_epi32(0x007fffff);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(from + i);
    const __m512i bits = _mm512_castps_si512(v);
    if (_mm512_testn_epi32_mask(bits, exponent) & _mm512_test_epi32_mask(bits, mantissa)) {
      ToBf16Loop(to + i, from + i, 16);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
    }
  }
  ToBf16Loop(to + i, from + i, n - i);
}
const UpdateKernels kAvx512Bf16{Avx512PoolExample, Avx512ScatterExample,
                                Avx512ScatterExampleBf16, Avx512Adagrad, Avx512Adam, Avx512Bf16ToBf16,
                                Avx512ReluMask, Avx512ReluMaskBf16};

}  // namespace

const UpdateKernels& UpdateKernelsFor(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return kAvx2;
    case CpuIsa::kAvx512:
      return kAvx512;
    case CpuIsa::kAvx512Bf16:
      return kAvx512Bf16;
    case CpuIsa::kBaseline:
      break;
  }
  return kBaseline;
}

const UpdateKernels& Kernels() {
  static const UpdateKernels& kernels = UpdateKernelsFor(DetectedIsa());
  return kernels;
}

}  // namespace strata
