// Mean pooling of a slot, as a scaling of its sum pooling: slot s of example i, when s is
// mean-pooled (ModelSpec::mean_slots) and holds n > 1 keys, is multiplied by 1.0f / n, in the
// forward MLP input and in the backward input gradient before it is scattered to the keys
// (d mean / d e_j = 1 / n). Both backends apply exactly this (the CUDA one in
// cuda/pool_kernels.cu through MeanScale), so their floats agree. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/common/hash.h"
#include "strata/data/batch.h"
#include "strata/model/model_spec.h"

namespace strata {

STRATA_HOST_DEVICE inline float MeanScale(uint32_t keys) { return keys > 1 ? 1.0f / static_cast<float>(keys) : 1.0f; }

// One flag per slot: 1 when mean-pooled. Empty when every slot is sum-pooled.
std::vector<uint8_t> MeanSlotFlags(const ModelSpec& spec);

// x: (B, width) rows whose first S*dim columns are the pooled slots; scales the mean slots.
void ScaleMeanSlots(const Batch& batch, const std::vector<uint8_t>& mean, int dim, int width, float* x);

}  // namespace strata
