// DLRM's dot interaction and its gradient (strata/model/dot_interaction.h).
#include "strata/model/dot_interaction.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace strata {

const float* DotInteraction::Vector(const float* input, const float* z, int i, int v) const {
  if (bottom) {
    if (v == 0) return z + static_cast<size_t>(i) * dim;
    --v;
  }
  return input + static_cast<size_t>(i) * input_width + static_cast<size_t>(v) * dim;
}

void DotInteraction::Forward(const float* input, const float* z, int B, float* out) const {
  const int V = vectors(), width = output_width();
  for (int i = 0; i < B; ++i) {
    float* o = out + static_cast<size_t>(i) * width;
    if (bottom) {
      std::memcpy(o, z + static_cast<size_t>(i) * dim, dim * sizeof(float));
      o += dim;
    }
    for (int a = 0; a < V; ++a) {
      const float* va = Vector(input, z, i, a);
      for (int b = a + 1; b < V; ++b) {
        const float* vb = Vector(input, z, i, b);
        float dot = 0.0f;
        for (int k = 0; k < dim; ++k) dot += va[k] * vb[k];
        *o++ = dot;
      }
    }
  }
}

void DotInteraction::Backward(const float* input, const float* z, int B, const float* dout, float* dinput,
                              float* dz) const {
  const int V = vectors(), width = output_width();
  std::vector<float> dv(static_cast<size_t>(V) * dim);
  for (int i = 0; i < B; ++i) {
    const float* g = dout + static_cast<size_t>(i) * width;
    std::fill(dv.begin(), dv.end(), 0.0f);
    if (bottom) {
      std::memcpy(dv.data(), g, dim * sizeof(float));
      g += dim;
    }
    for (int a = 0; a < V; ++a) {
      const float* va = Vector(input, z, i, a);
      for (int b = a + 1; b < V; ++b) {
        const float* vb = Vector(input, z, i, b);
        const float gab = *g++;
        for (int k = 0; k < dim; ++k) {
          dv[static_cast<size_t>(a) * dim + k] += gab * vb[k];
          dv[static_cast<size_t>(b) * dim + k] += gab * va[k];
        }
      }
    }
    const int first_slot = bottom ? 1 : 0;
    if (bottom) std::memcpy(dz + static_cast<size_t>(i) * dim, dv.data(), dim * sizeof(float));
    float* d = dinput + static_cast<size_t>(i) * input_width;
    for (int s = 0; s < slots; ++s) {
      for (int k = 0; k < dim; ++k) d[s * dim + k] += dv[static_cast<size_t>(s + first_slot) * dim + k];
    }
  }
}

}  // namespace strata
