// Seeded batches for HBM-PS tests, and the staging of their keys' fresh rows: shared by
// the CUDA backend's single-process and multi-rank tests.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/data/batch.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/model_spec.h"
#include "strata/model/optimizer.h"

namespace strata::test {

// A batch with 0-3 keys per slot drawn from few tokens, so keys repeat within the batch;
// labels follow the first slot's first token so training has something to learn.
Batch RandomBatch(const ModelSpec& spec, int B, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.Clear(spec.num_slots, spec.num_dense);
  b.num_examples = B;
  for (int i = 0; i < B; ++i) {
    int label_token = -1;
    for (int s = 0; s < spec.num_slots; ++s) {
      const int count = static_cast<int>(rng() % 4);
      for (int c = 0; c < count; ++c) {
        const int token = static_cast<int>(rng() % (s == 0 ? 6 : 40));
        if (label_token < 0 && s == 0) label_token = token;
        b.keys.push_back(SlotKey(s, static_cast<uint64_t>(token)));
      }
      b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
    }
    for (int d = 0; d < spec.num_dense; ++d) b.dense.push_back(static_cast<float>(rng() % 1000) / 500.0f - 1.0f);
    b.labels.push_back(label_token >= 0 && label_token % 2 == 0 ? 1.0f : 0.0f);
  }
  return b;
}

// Stages fresh rows (InitRow) for every key of the batches into ps.
void Stage(HbmPs& ps, const ModelSpec& spec, const std::vector<Batch>& batches, int pass) {
  std::vector<uint64_t> keys;
  for (const Batch& b : batches) keys.insert(keys.end(), b.keys.begin(), b.keys.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const size_t rb = RowLayoutOf(spec).bytes();
  std::vector<uint8_t> rows(keys.size() * rb);
  for (size_t i = 0; i < keys.size(); ++i) InitRow(spec, keys[i], &rows[i * rb]);
  REQUIRE(ps.BeginPass(pass, keys.size()).ok());
  REQUIRE(ps.Insert(keys.data(), keys.size(), rows.data()).ok());
}
}  // namespace strata::test
