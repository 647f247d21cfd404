// Mean pooling's scaling on the host.
#include "strata/model/pooling.h"

namespace strata {

std::vector<uint8_t> MeanSlotFlags(const ModelSpec& spec) {
  if (spec.mean_slots.empty()) return {};
  std::vector<uint8_t> flags(static_cast<size_t>(spec.num_slots), 0);
  for (int s : spec.mean_slots) flags[static_cast<size_t>(s)] = 1;
  return flags;
}

void ScaleMeanSlots(const Batch& batch, const std::vector<uint8_t>& mean, int dim, int width, float* x) {
  if (mean.empty()) return;
  const int S = batch.num_slots;
  for (int i = 0; i < batch.num_examples; ++i) {
    for (int s = 0; s < S; ++s) {
      const size_t seg = static_cast<size_t>(i) * S + s;
      if (!mean[s]) continue;
      const float scale = MeanScale(batch.offsets[seg + 1] - batch.offsets[seg]);
      float* v = x + static_cast<size_t>(i) * width + static_cast<size_t>(s) * dim;
      for (int d = 0; d < dim; ++d) v[d] *= scale;
    }
  }
}

}  // namespace strata
