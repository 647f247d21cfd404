// The factorization machine's second-order term and its input gradient (model/fm.h).
#include "strata/model/fm.h"

#include <cstddef>
#include <vector>

namespace strata {
namespace {

// sum (d) = sum over the slots of row's embeddings, in slot order.
void SlotSum(const float* row, int slots, int dim, float* sum) {
  for (int k = 0; k < dim; ++k) sum[k] = 0.0f;
  for (int s = 0; s < slots; ++s) {
    for (int k = 0; k < dim; ++k) sum[k] += row[s * dim + k];
  }
}

}  // namespace

void AddFmTerm(const float* input, int B, int width, int slots, int dim, float* logits) {
  std::vector<float> sum(dim);
  for (int i = 0; i < B; ++i) {
    const float* row = input + static_cast<size_t>(i) * width;
    SlotSum(row, slots, dim, sum.data());
    float fm = 0.0f;
    for (int k = 0; k < dim; ++k) {
      float squares = 0.0f;
      for (int s = 0; s < slots; ++s) squares += row[s * dim + k] * row[s * dim + k];
      fm += sum[k] * sum[k] - squares;
    }
    logits[i] += 0.5f * fm;
  }
}

void AddFmGradient(const float* input, int B, int width, int slots, int dim, const float* dlogits,
                   float* dinput) {
  std::vector<float> sum(dim);
  for (int i = 0; i < B; ++i) {
    const size_t at = static_cast<size_t>(i) * width;
    SlotSum(input + at, slots, dim, sum.data());
    for (int s = 0; s < slots; ++s) {
      for (int k = 0; k < dim; ++k) dinput[at + s * dim + k] += dlogits[i] * (sum[k] - input[at + s * dim + k]);
    }
  }
}

}  // namespace strata
