// Mean pooling on the host backend: a mean slot holding one key twice is exactly that key
// alone (the same predictions, loss and gradients, bitwise), where a sum slot doubles it;
// ScaleMeanSlots scales only mean slots holding more than one key.
#include <doctest/doctest.h>

#include <vector>

#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/optimizer.h"
#include "strata/model/pooling.h"

namespace strata {
namespace {

constexpr int kSlots = 2, kDense = 1, kDim = 4;

HbmOptions Model(std::vector<int> mean_slots) {
  HbmOptions o;
  o.spec.num_slots = kSlots;
  o.spec.num_dense = kDense;
  o.spec.embedding_dim = kDim;
  o.spec.mlp = {8};
  o.spec.mean_slots = std::move(mean_slots);
  return o;
}

// One example: slot 0 holds `slot0` (keys of token values), slot 1 the key of token 7.
Batch OneExample(const std::vector<uint64_t>& slot0) {
  Batch b;
  b.Clear(kSlots, kDense);
  for (uint64_t t : slot0) b.keys.push_back(SlotKey(0, t));
  b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
  b.keys.push_back(SlotKey(1, 7));
  b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
  b.dense.push_back(0.5f);
  b.labels.push_back(1.0f);
  b.num_examples = 1;
  return b;
}

struct Outcome {
  float probability = 0;
  WorkerGrads grads;
};

Outcome Run(const HbmOptions& o, const Batch& batch) {
  auto ps = NewHostHbmPs(o);
  const std::vector<uint64_t> keys = {SlotKey(0, 3), SlotKey(1, 7)};
  const size_t rb = RowLayout(kDim, kDim).bytes();
  std::vector<uint8_t> rows(keys.size() * rb);
  for (size_t i = 0; i < keys.size(); ++i) InitRow(o.spec, keys[i], &rows[i * rb]);
  REQUIRE(ps->BeginPass(1, keys.size()).ok());
  REQUIRE(ps->Insert(keys.data(), keys.size(), rows.data()).ok());
  Outcome out;
  REQUIRE(ps->Predict(0, batch, &out.probability).ok());
  REQUIRE(ps->ComputeGradients(0, batch, 1.0f, &out.grads).ok());
  return out;
}

}  // namespace

TEST_CASE("pooling: a mean slot holding a key twice is the key alone; a sum slot is not") {
  const Outcome alone = Run(Model({0}), OneExample({3}));
  const Outcome twice = Run(Model({0}), OneExample({3, 3}));
  CHECK(twice.probability == alone.probability);
  CHECK(twice.grads.loss_sum == alone.grads.loss_sum);
  CHECK(twice.grads.keys == alone.grads.keys);
  CHECK(twice.grads.grads == alone.grads.grads);  // dx/2 + dx/2 == dx exactly
  CHECK(twice.grads.dense == alone.grads.dense);
  CHECK(twice.grads.counts == std::vector<uint32_t>{2, 1});
  const Outcome summed = Run(Model({}), OneExample({3, 3}));
  CHECK(summed.probability != alone.probability);
}

TEST_CASE("pooling: ScaleMeanSlots scales mean slots by 1/keys, others not at all") {
  Batch b;
  b.Clear(3, 0);
  b.num_examples = 1;
  b.keys = {1, 2, 3, 4, 5, 6};
  b.offsets = {0, 3, 5, 6};  // slot 0: 3 keys, slot 1: 2 keys, slot 2: 1 key
  std::vector<float> x(6, 6.0f);  // dim 2
  ModelSpec spec;
  spec.num_slots = 3;
  spec.mean_slots = {0, 2};
  ScaleMeanSlots(b, MeanSlotFlags(spec), 2, 6, x.data());
  CHECK(x == std::vector<float>{2, 2, 6, 6, 6, 6});
  CHECK(MeanSlotFlags(ModelSpec{}).empty());
}

}  // namespace strata
