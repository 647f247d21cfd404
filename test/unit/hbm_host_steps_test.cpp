// The host backend's steps: TrainAlone (which updates the rows its batch index found, and
// indexes the batch it is told comes next) against the three calls it stands for, and a
// lone worker's step on one thread against the same step split over the rank's threads
// (index lookups, pooling, sparse updates, the MLP's elementwise passes), bitwise, on
// batches of thousands of distinct keys so that every split has several parts; and Export,
// which copies rows out on the same threads; a stage-in whose room was made (ReserveStage)
// for more or fewer keys than it stages; and a pass refresh's copy from the active tables.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/hbm_batches.h"
#include "model/onednn_gemm.h"
#include "strata/common/partition.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/common/row.h"
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

// Three wide batches, then the third's twin with other keys: an index built ahead for the
// wrong one of the twins would pass any check of its size.
std::vector<Batch> Batches(const ModelSpec& spec) {
  std::vector<Batch> batches;
  for (uint64_t seed = 1; seed <= 3; ++seed) batches.push_back(WideBatch(spec, seed));
  Batch twin = batches.back();
  for (uint64_t& key : twin.keys) ++key;
  batches.push_back(twin);
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

// TrainAlone builds the batch index of the batch it is told comes next while it scatters;
// the first test case's steps are told the batch that follows. Here the first step is
// told of the third batch, which then does not come next: the second must index its own.
TEST_CASE("host: a step told of a next batch that does not come next trains as one told of none") {
  const HbmOptions o = Model(2, SparseOptimizerKind::kAdagrad, DensePrecision::kFp32);
  const std::vector<Batch> batches = Batches(o.spec);
  const std::vector<const Batch*> wrong = {&batches[2], nullptr, nullptr, nullptr};
  const std::vector<const Batch*> none(batches.size(), nullptr);
  auto told_wrong = NewHostHbmPs(o), told_none = NewHostHbmPs(o);
  DenseState a, b;
  CHECK(test::TrainSteps(*told_wrong, o.spec, batches, true, &a, &wrong) ==
        test::TrainSteps(*told_none, o.spec, batches, true, &b, &none));
  CHECK(a.params == b.params);
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

TEST_CASE("host: Export copies each row on the rank's threads, and a key the pass lacks is an error naming it") {
  const HbmOptions o = Model(2, SparseOptimizerKind::kAdagrad, DensePrecision::kFp32);
  auto ps = NewHostHbmPs(o);
  const size_t rb = RowLayoutOf(o.spec).bytes();
  std::vector<uint64_t> keys;
  for (uint64_t t = 0; t < 5000; ++t) keys.push_back(SlotKey(static_cast<int>(t % 6), t));
  std::vector<uint8_t> rows(keys.size() * rb);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 7 + i / 251);
  REQUIRE(ps->BeginPass(0, keys.size()).ok());
  REQUIRE(ps->Insert(keys.data(), keys.size(), rows.data()).ok());

  std::vector<uint64_t> reversed(keys.rbegin(), keys.rend());
  std::vector<uint8_t> out(rows.size());
  REQUIRE(ps->Export(reversed.data(), reversed.size(), out.data()).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    CHECK(std::memcmp(&out[i * rb], &rows[(keys.size() - 1 - i) * rb], rb) == 0);
  }

  reversed[3000] = SlotKey(2, 123456789);
  const Status missing = ps->Export(reversed.data(), reversed.size(), out.data());
  CHECK(missing.code() == Status::Code::kNotFound);
  CHECK(missing.ToString().find(std::to_string(SlotKey(2, 123456789))) != std::string::npos);
}

TEST_CASE("host: a stage-in reserved for more or fewer keys than it stages holds the staged rows, the active pass untouched") {
  for (const int workers : {1, 3}) {
    CAPTURE(workers);
    HbmOptions o = Model(2, SparseOptimizerKind::kAdagrad, DensePrecision::kFp32);
    o.workers = workers;
    auto ps = NewHostHbmPs(o);
    const size_t rb = RowLayoutOf(o.spec).bytes();
    const auto pass_of = [&](uint64_t first, size_t n, std::vector<uint64_t>* keys, std::vector<uint8_t>* rows) {
      keys->clear();
      for (uint64_t t = first; t < first + n; ++t) keys->push_back(SlotKey(static_cast<int>(t % 6), t));
      rows->resize(n * rb);
      for (size_t i = 0; i < rows->size(); ++i) (*rows)[i] = static_cast<uint8_t>(i * 5 + first + i / 97);
    };
    std::vector<uint64_t> active_keys, keys;
    std::vector<uint8_t> active_rows, rows, out;
    pass_of(0, 3000, &active_keys, &active_rows);
    REQUIRE(ps->BeginPass(0, active_keys.size()).ok());
    REQUIRE(ps->Insert(active_keys.data(), active_keys.size(), active_rows.data()).ok());
    for (const auto& [reserved, staged] : {std::pair<size_t, size_t>{8000, 2000}, {500, 4000}}) {
      CAPTURE(reserved);
      pass_of(100000 + staged, staged, &keys, &rows);
      ps->ReserveStage(reserved);
      REQUIRE(ps->BeginStage(1, keys.size()).ok());
      REQUIRE(ps->Stage(keys.data(), keys.size(), rows.data()).ok());
      out.resize(active_rows.size());
      REQUIRE(ps->Export(active_keys.data(), active_keys.size(), out.data()).ok());
      CHECK(out == active_rows);
      REQUIRE(ps->SwapIn().ok());
      out.resize(rows.size());
      REQUIRE(ps->Export(keys.data(), keys.size(), out.data()).ok());
      CHECK(out == rows);
      REQUIRE(ps->SwapIn().ok());  // the first pass active again
    }
  }
}

// A pass refresh's copy (StageFromActive): the staged rows of the keys both passes hold
// become the active pass's, the other staged rows stay, and a key missing from the active
// set (for the host backend, from either) is an error naming it. The host backend copies
// between its tables; a 16-bit row dtype
// goes through Export and Stage, so the copy is the row's stored rounding, as a pull from
// its owner would give.
TEST_CASE("host: a staged pass takes the active pass's rows of the keys both hold") {
  for (const RowDtype dtype : {RowDtype::kFp32, RowDtype::kBf16}) {
    for (const int workers : {1, 3}) {
      CAPTURE(static_cast<int>(dtype));
      CAPTURE(workers);
      HbmOptions o = Model(2, SparseOptimizerKind::kAdagrad, DensePrecision::kFp32);
      o.workers = workers;
      const RowLayout stored = RowLayoutOf([&] {
        ModelSpec spec = o.spec;
        spec.row_dtype = dtype;
        return spec;
      }());
      auto ps = WithRowDtype(NewHostHbmPs(o), stored);
      const size_t rb = stored.bytes();
      const auto rows_of = [&](uint64_t first, size_t n, std::vector<uint64_t>* keys, std::vector<uint8_t>* rows) {
        keys->clear();
        std::vector<uint8_t> wide(n * RowLayoutOf(o.spec).bytes());
        for (uint64_t t = first; t < first + n; ++t) {
          keys->push_back(SlotKey(static_cast<int>(t % 6), t));
          InitRow(o.spec, keys->back() + 7, &wide[(t - first) * RowLayoutOf(o.spec).bytes()]);
        }
        rows->resize(n * rb);
        ConvertRows(RowLayoutOf(o.spec), wide.data(), n, stored, rows->data());
      };
      std::vector<uint64_t> active_keys, staged_keys;
      std::vector<uint8_t> active_rows, staged_rows, out;
      rows_of(0, 3000, &active_keys, &active_rows);       // keys 0..2999
      rows_of(2000, 3000, &staged_keys, &staged_rows);    // keys 2000..4999, other rows
      REQUIRE(ps->BeginPass(0, active_keys.size()).ok());
      REQUIRE(ps->Insert(active_keys.data(), active_keys.size(), active_rows.data()).ok());
      REQUIRE(ps->BeginStage(1, staged_keys.size()).ok());
      REQUIRE(ps->Stage(staged_keys.data(), staged_keys.size(), staged_rows.data()).ok());
      const std::vector<uint64_t> both(staged_keys.begin(), staged_keys.begin() + 1000);
      REQUIRE(ps->StageFromActive(both.data(), both.size(), rb).ok());
      REQUIRE(ps->SwapIn().ok());
      out.resize(staged_rows.size());
      REQUIRE(ps->Export(staged_keys.data(), staged_keys.size(), out.data()).ok());
      std::vector<uint8_t> expected(staged_rows);
      std::memcpy(expected.data(), &active_rows[2000 * rb], 1000 * rb);
      CHECK(out == expected);
      REQUIRE(ps->SwapIn().ok());  // the first pass active again, the second staged

      for (const uint64_t absent : {SlotKey(5, 5), SlotKey(5, 4001)}) {  // not staged; not active
        CAPTURE(absent);
        if (absent == SlotKey(5, 5) && dtype != RowDtype::kFp32) continue;  // Stage would insert it
        const Status missing = ps->StageFromActive(&absent, 1, rb);
        CHECK(missing.code() == Status::Code::kNotFound);
        CHECK(missing.ToString().find(std::to_string(absent)) != std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace strata
