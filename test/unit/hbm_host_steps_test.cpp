// The host backend's steps: TrainAlone (which updates the rows its batch index found) against
// the three calls it stands for, and a lone worker's step on one thread against the same step
// split over the rank's threads (index lookups, pooling, sparse updates, the MLP's
// elementwise passes), bitwise, on batches of thousands of distinct keys so that every
// split has several parts.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "../common/hbm_batches.h"
#include "model/onednn_gemm.h"
#include "strata/common/partition.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/optimizer.h"

namespace strata {
namespace {

using test::CheckSameSteps;

constexpr int kBatch = 512;

HbmOptions Model(int threads, SparseOptimizerKind sparse, DensePrecision precision) {
  HbmOptions o;
  o.spec = test::SmallSpec(sparse, DenseOptimizerKind::kAdam);
  o.spec.num_slots = 6;
  o.spec.mlp = {64, 32};
  o.workers = 1;
  o.threads = threads;
  o.max_batch = kBatch;
  o.dense_precision = precision;
  return o;
}

// One or two keys a slot, slot 0 from 50 tokens and the others from a hundred thousand: about
// 3,900 distinct keys in 4,600 occurrences.
Batch WideBatch(const ModelSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.Clear(spec.num_slots, spec.num_dense);
  b.num_examples = kBatch;
  for (int i = 0; i < kBatch; ++i) {
    for (int s = 0; s < spec.num_slots; ++s) {
      for (uint64_t c = 0; c <= rng() % 2; ++c) b.keys.push_back(SlotKey(s, rng() % (s == 0 ? 50 : 100000)));
      b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
    }
    for (int d = 0; d < spec.num_dense; ++d) b.dense.push_back(static_cast<float>(rng() % 1000) / 500.0f - 1.0f);
    b.labels.push_back(static_cast<float>(b.keys[b.offsets[i * spec.num_slots]] % 2));
  }
  return b;
}

std::vector<Batch> Batches(const ModelSpec& spec) {
  std::vector<Batch> batches;
  for (uint64_t seed = 1; seed <= 3; ++seed) batches.push_back(WideBatch(spec, seed));
  return batches;
}

void CheckSameTraining(const HbmOptions& a, bool a_alone, const HbmOptions& b, bool b_alone) {
  auto pa = NewHostHbmPs(a), pb = NewHostHbmPs(b);
  CheckSameSteps(*pa, a_alone, *pb, b_alone, a.spec, Batches(a.spec));
}

TEST_CASE("host: a step of a job of one worker equals its three calls, bitwise") {
  for (SparseOptimizerKind sparse : {SparseOptimizerKind::kAdagrad, SparseOptimizerKind::kFtrl}) {
    const HbmOptions o = Model(2, sparse, DensePrecision::kFp32);
    CheckSameTraining(o, true, o, false);
  }
}

TEST_CASE("host: a lone worker's steps are the same on one thread and on two, bitwise") {
  const std::vector<DensePrecision> precisions = {DensePrecision::kFp32, DensePrecision::kBf16};
  for (DensePrecision precision : precisions) {
    if (precision == DensePrecision::kBf16 && !OnednnGemm::Bf16Supported()) {
      MESSAGE("bf16 case skipped: this CPU has no bf16 instructions");
      continue;
    }
    CAPTURE(static_cast<int>(precision));
    CheckSameTraining(Model(1, SparseOptimizerKind::kAdagrad, precision), true,
                      Model(2, SparseOptimizerKind::kAdagrad, precision), true);
  }
}

}  // namespace
}  // namespace strata
