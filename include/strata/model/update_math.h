// Per-coordinate training arithmetic shared by the host backend and the CUDA backend.
//
// Every function here is a pure inline function of its arguments (no state, no std::
// containers, no allocation), marked STRATA_HD so nvcc compiles the same source for the
// device. Both backends call these and nothing else for optimizer steps and the per-example
// loss, so a row updated on the GPU and on the CPU goes through the same formulas in the
// same order. The CUDA build compiles without FMA contraction (-fmad=false), and sqrtf and
// division are correctly rounded on both, so the sparse and dense updates are bitwise equal
// between backends; the loss's expf/log1pf can still differ in the last ulp.
//
// Thread safety: pure functions; callers own the memory they pass.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__
#else
#define STRATA_HD
#endif

namespace strata {

// ---- sparse optimizers (one embedding coordinate w with its state s) ----

// Adagrad: s += g^2; w -= lr * g / sqrt(s). REQUIRES: s > 0 before the call (rows start at
// ModelSpec::adagrad_initial_accumulator) so the first step is finite.
STRATA_HD inline void AdagradUpdate(float* w, float* s, float g, float lr) {
  *s += g * g;
  *w -= lr * g / sqrtf(*s);
}

// Row-wise Adagrad (one accumulator a row, as TorchRec's default): s += mean(g^2) over the
// row's dim coordinates (summed in coordinate order); w -= lr * g / sqrt(s) for each.
STRATA_HD inline void RowwiseAdagradUpdate(float* w, float* s, const float* g, int dim, float lr) {
  float sum = 0.0f;
  for (int c = 0; c < dim; ++c) sum += g[c] * g[c];
  *s += sum / static_cast<float>(dim);
  const float scale = lr / sqrtf(*s);
  for (int c = 0; c < dim; ++c) w[c] -= scale * g[c];
}

// Lazy Adam on one row (TensorFlow's LazyAdam, with a step count of the row's own): the
// row's moments m, v (dim each) and step count t move only in the steps that touch the row:
// t += 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; w -= lr m^ / (sqrt(v^) + eps), with
// m^, v^ bias-corrected by the row's t. (t is a float: past 2^24 steps it stops counting,
// where the corrections are 1 to float precision.)
constexpr float kSparseAdamBeta1 = 0.9f;
constexpr float kSparseAdamBeta2 = 0.999f;
constexpr float kSparseAdamEps = 1e-8f;
STRATA_HD inline void LazyAdamUpdate(float* w, float* m, float* v, float* t, const float* g, int dim, float lr) {
  *t += 1.0f;
  // In double, rounded once: the device's powf and glibc's differ in the last ulp.
  const float bc1 = static_cast<float>(1.0 - pow(static_cast<double>(kSparseAdamBeta1), static_cast<double>(*t)));
  const float bc2 = static_cast<float>(1.0 - pow(static_cast<double>(kSparseAdamBeta2), static_cast<double>(*t)));
  for (int c = 0; c < dim; ++c) {
    m[c] = kSparseAdamBeta1 * m[c] + (1.0f - kSparseAdamBeta1) * g[c];
    v[c] = kSparseAdamBeta2 * v[c] + (1.0f - kSparseAdamBeta2) * g[c] * g[c];
    w[c] -= lr * (m[c] / bc1) / (sqrtf(v[c] / bc2) + kSparseAdamEps);
  }
}

// FTRL-proximal (McMahan et al. 2013) on one coordinate, alpha = lr: with n' = n + g^2,
// z += g - (sqrt(n') - sqrt(n)) / alpha * w; n = n'; then w = 0 where |z| <= l1, else
// w = -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2). A step at rate 0 (a schedule
// decayed to --end-lr 0) changes nothing: alpha divides.
STRATA_HD inline void FtrlUpdate(float* w, float* z, float* n, float g, float lr, float l1, float l2, float beta) {
  if (lr <= 0.0f) return;
  const float n_new = *n + g * g;
  *z += g - (sqrtf(n_new) - sqrtf(*n)) / lr * *w;
  *n = n_new;
  const float az = fabsf(*z);
  *w = az <= l1 ? 0.0f : -(*z - copysignf(l1, *z)) / ((beta + sqrtf(*n)) / lr + l2);
}

// Plain SGD: w -= lr * g.
STRATA_HD inline void SgdUpdate(float* w, float g, float lr) { *w -= lr * g; }

// ---- Adam (dense parameters) ----

// Per-step scalars of Adam with bias correction, computed once per step on the host in
// double (so every coordinate and both backends see the same rounded floats).
struct AdamStepScalars {
  float beta1;
  float beta2;
  float eps;
  float step_size;        // lr / (1 - beta1^t)
  float inv_sqrt_bc2;     // 1 / sqrt(1 - beta2^t)
};

// REQUIRES: t >= 1 (the step being taken, counting from 1).
STRATA_HD inline AdamStepScalars MakeAdamStepScalars(float lr, float beta1, float beta2,
                                                     float eps, long long t) {
  double bc1 = 1.0 - pow(static_cast<double>(beta1), static_cast<double>(t));
  double bc2 = 1.0 - pow(static_cast<double>(beta2), static_cast<double>(t));
  AdamStepScalars k;
  k.beta1 = beta1;
  k.beta2 = beta2;
  k.eps = eps;
  k.step_size = static_cast<float>(static_cast<double>(lr) / bc1);
  k.inv_sqrt_bc2 = static_cast<float>(1.0 / sqrt(bc2));
  return k;
}

// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= step_size * m / (sqrt(v)/sqrt(bc2) + eps).
// The same form as PyTorch's torch.optim.Adam (non-amsgrad, no weight decay).
STRATA_HD inline void AdamUpdate(float* w, float* m, float* v, float g, const AdamStepScalars& k) {
  *m = k.beta1 * *m + (1.0f - k.beta1) * g;
  *v = k.beta2 * *v + (1.0f - k.beta2) * g * g;
  *w -= k.step_size * *m / (sqrtf(*v) * k.inv_sqrt_bc2 + k.eps);
}

// ---- sigmoid cross-entropy on a logit z with label y in {0, 1} ----

// sigmoid(z) without overflow for any finite z.
STRATA_HD inline float StableSigmoid(float z) {
  if (z >= 0.0f) return 1.0f / (1.0f + expf(-z));
  float e = expf(z);
  return e / (1.0f + e);
}

// -[y log sigmoid(z) + (1-y) log(1 - sigmoid(z))] = max(z,0) - z y + log1p(exp(-|z|)),
// evaluated in double so a batch's sum does not lose the small terms.
STRATA_HD inline double LogitLogLoss(float z, float y) {
  double zd = z;
  double yd = y;
  double relu = zd > 0.0 ? zd : 0.0;
  return relu - zd * yd + log1p(exp(-fabs(zd)));
}

// d loss / d z = sigmoid(z) - y, times the caller's scale (e.g. 1 / global batch size).
STRATA_HD inline float LogitLogLossGrad(float z, float y, float scale) {
  return (StableSigmoid(z) - y) * scale;
}

}  // namespace strata
