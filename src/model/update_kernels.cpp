// UpdateKernels: one loop body per kernel, inlined into a function per instruction set
// (GCC's target attribute), where the compiler vectorizes it for that set.
#include "strata/model/update_kernels.h"

#include "strata/common/half.h"

namespace strata {
namespace {

#define STRATA_ALWAYS_INLINE inline __attribute__((always_inline))

STRATA_ALWAYS_INLINE void AddLoop(float* __restrict to, const float* __restrict from, size_t n) {
  for (size_t i = 0; i < n; ++i) to[i] += from[i];
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

// The kernels compiled for one instruction set: `target` is GCC's target attribute.
#define STRATA_UPDATE_KERNELS(name, target)                                                          \
  target void name##Add(float* to, const float* from, size_t n) { AddLoop(to, from, n); }            \
  target void name##Adagrad(float* w, float* s, const float* g, size_t n, float lr) {                \
    AdagradLoop(w, s, g, n, lr);                                                                     \
  }                                                                                                  \
  target void name##Adam(float* w, float* m, float* v, const float* g, size_t n, const AdamStepScalars& k) { \
    AdamLoop(w, m, v, g, n, k);                                                                      \
  }                                                                                                  \
  target void name##ToBf16(uint16_t* to, const float* from, size_t n) { ToBf16Loop(to, from, n); }   \
  const UpdateKernels k##name{name##Add, name##Adagrad, name##Adam, name##ToBf16};

STRATA_UPDATE_KERNELS(Baseline, )
STRATA_UPDATE_KERNELS(Avx2, __attribute__((target("avx2"))))
STRATA_UPDATE_KERNELS(Avx512, __attribute__((target("avx512f"))))

}  // namespace

const UpdateKernels& UpdateKernelsFor(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return kAvx2;
    case CpuIsa::kAvx512:
      return kAvx512;
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
