// Seeded batches for HBM-PS tests, the staging of their keys' fresh rows, and a few steps
// trained on them: shared by the host and CUDA backends' single-process tests and the
// multi-rank ones.
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

// A small model: 5 slots of 8 floats, 3 dense features, an MLP of 32 and 16, with the given
// optimizers.
inline ModelSpec SmallSpec(SparseOptimizerKind sparse, DenseOptimizerKind dense) {
  ModelSpec spec;
  spec.num_slots = 5;
  spec.num_dense = 3;
  spec.embedding_dim = 8;
  spec.mlp = {32, 16};
  spec.sparse_optimizer = sparse;
  spec.dense_optimizer = dense;
  spec.lr_sparse = 0.05f;
  spec.lr_dense = 0.01f;
  return spec;
}

// A batch with 0-3 keys per slot drawn from few tokens, so keys repeat within the batch;
// labels follow the first slot's first token so training has something to learn.
inline Batch RandomBatch(const ModelSpec& spec, int B, uint64_t seed) {
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
inline void Stage(HbmPs& ps, const ModelSpec& spec, const std::vector<Batch>& batches, int pass) {
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

// The rows of keys (every float of each) as ps exports them; *counters gets each row's
// freq and last pass.
inline std::vector<float> RowFloats(HbmPs& ps, const ModelSpec& spec, const std::vector<uint64_t>& keys,
                                    std::vector<uint32_t>* counters) {
  const RowLayout layout = RowLayoutOf(spec);
  std::vector<uint8_t> rows(keys.size() * layout.bytes());
  REQUIRE(ps.Export(keys.data(), keys.size(), rows.data()).ok());
  std::vector<float> floats;
  counters->clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint8_t* row = &rows[i * layout.bytes()];
    floats.insert(floats.end(), RowLayout::Embedding(row), RowLayout::Embedding(row) + layout.floats());
    counters->push_back(layout.Freq(row));
    counters->push_back(layout.LastPass(row));
  }
  return floats;
}

// Trains the batches with TrainAlone, or with the three calls it stands for, and returns
// the rows of every key and the dense state. TrainAlone is told of the batch that follows,
// or of told[i] at step i where told is given.
inline std::vector<float> TrainSteps(HbmPs& ps, const ModelSpec& spec, const std::vector<Batch>& batches,
                                     bool alone, DenseState* dense,
                                     const std::vector<const Batch*>* told = nullptr) {
  Stage(ps, spec, batches, 1);
  std::vector<uint64_t> keys;
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    WorkerGrads g;
    if (alone) {
      const Batch* follows = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
      const Status st = ps.TrainAlone(b, told ? (*told)[i] : follows, 1.0f / 64, &g);
      REQUIRE_MESSAGE(st.ok(), st.ToString());
      CHECK(g.examples == b.num_examples);
    } else {
      REQUIRE(ps.ComputeGradients(0, b, 1.0f / 64, &g).ok());
      REQUIRE(ps.ApplySparse(g.keys.data(), g.keys.size(), g.grads.data(), g.counts.data()).ok());
      REQUIRE(ps.ApplyDense(g.dense.data()).ok());
    }
    keys.insert(keys.end(), b.keys.begin(), b.keys.end());
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  REQUIRE(ps.GetDenseState(dense).ok());
  std::vector<uint32_t> counters;
  std::vector<float> rows = RowFloats(ps, spec, keys, &counters);
  for (uint32_t c : counters) rows.push_back(static_cast<float>(c));
  return rows;
}

// Trains the batches on a and on b (TrainAlone or the three calls, as a_alone and b_alone
// say) and checks that both end with the same rows and dense state, bitwise.
inline void CheckSameSteps(HbmPs& a, bool a_alone, HbmPs& b, bool b_alone, const ModelSpec& spec,
                           const std::vector<Batch>& batches) {
  DenseState da, db;
  CHECK(TrainSteps(a, spec, batches, a_alone, &da) == TrainSteps(b, spec, batches, b_alone, &db));
  CHECK(da.steps == db.steps);
  CHECK(da.params == db.params);
  CHECK(da.m == db.m);
  CHECK(da.v == db.v);
}

}  // namespace strata::test
