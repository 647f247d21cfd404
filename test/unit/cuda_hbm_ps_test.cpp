// CUDA HBM-PS against the host backend on the same seeded inputs: a batch's distinct keys,
// counts, sparse and dense gradients, loss and predictions (which check the pooled
// embeddings, sum and mean, and the cuBLAS MLP) and one dense optimizer step, each to 1e-5
// relative; one sparse optimizer step from the same gradients, bitwise; bf16 rows through
// WithRowDtype; a hot key's gradient; each --model (DCN-v2's cross layers full and low
// rank, Wide & Deep, DLRM's bottom MLP and dot interaction); TrainAlone against the calls it stands for, bitwise;
// and a short training run whose eval logloss agrees to 1e-4. The same checks run with rows sharded over two workers, on two GPUs
// where there are two, else sharing one. Each case skips with one
// line when no CUDA device is visible.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "../common/hbm_batches.h"
#include "cuda_test_util.h"
#include "strata/model/optimizer.h"

namespace strata {
namespace {

using test::CheckSameSteps;
using test::RandomBatch;
using test::RowFloats;
using test::SmallSpec;
using test::Stage;

HbmOptions SmallModel(int workers, SparseOptimizerKind sparse, DenseOptimizerKind dense) {
  HbmOptions o;
  o.spec = SmallSpec(sparse, dense);
  o.workers = workers;
  if (workers > CudaDeviceCount()) o.devices.assign(workers, 0);  // the workers share GPU 0
  o.threads = 1;
  o.max_batch = 64;
  return o;
}

// |a - b| <= rel * max(|a|, |b|), with an absolute floor of rel * the vector's largest
// magnitude for entries that cancel to near zero.
void CheckClose(const std::vector<float>& a, const std::vector<float>& b, double rel) {
  REQUIRE(a.size() == b.size());
  double scale = 0;
  for (float x : b) scale = std::max(scale, std::fabs(static_cast<double>(x)));
  for (size_t i = 0; i < a.size(); ++i) {
    const double tol = rel * std::max({std::fabs(static_cast<double>(a[i])), std::fabs(static_cast<double>(b[i])), scale * 0.1});
    CHECK_MESSAGE(std::fabs(static_cast<double>(a[i]) - b[i]) <= tol, "index " << i << ": " << a[i] << " vs " << b[i]);
  }
}

void CompareOneStep(int workers, SparseOptimizerKind sparse, DenseOptimizerKind dense,
                    std::vector<int> mean_slots = {}, ModelKind kind = ModelKind::kDnn, int cross_rank = 0) {
  HbmOptions o = SmallModel(workers, sparse, dense);
  o.spec.mean_slots = std::move(mean_slots);
  o.spec.kind = kind;
  o.spec.cross_layers = 2;
  o.spec.cross_rank = cross_rank;
  o.spec.bottom_mlp = {16};
  // Cross layers add products whose sums cuBLAS orders its own way.
  const double tol = kind == ModelKind::kDcn || kind == ModelKind::kDlrm ? 1e-4 : 1e-5;
  auto host = NewHostHbmPs(o);
  std::unique_ptr<HbmPs> cuda;
  const Status made = NewCudaHbmPs(o, &cuda);
  REQUIRE_MESSAGE(made.ok(), made.ToString());
  std::vector<Batch> batches;
  for (int g = 0; g < workers; ++g) batches.push_back(RandomBatch(o.spec, 48, 100 + g));
  Stage(*host, o.spec, batches, 1);
  Stage(*cuda, o.spec, batches, 1);
  const float scale = 1.0f / (48.0f * workers);

  for (int g = 0; g < workers; ++g) {
    WorkerGrads h, c;
    REQUIRE(host->ComputeGradients(g, batches[g], scale, &h).ok());
    const Status st = cuda->ComputeGradients(g, batches[g], scale, &c);
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    CHECK(c.keys == h.keys);      // distinct keys in first-seen order
    CHECK(c.counts == h.counts);
    CHECK(c.examples == h.examples);
    CHECK(c.loss_sum == doctest::Approx(h.loss_sum).epsilon(tol));
    CheckClose(c.grads, h.grads, tol);
    CheckClose(c.dense, h.dense, tol);

    std::vector<float> hp(48), cp(48);
    REQUIRE(host->Predict(g, batches[g], hp.data()).ok());
    REQUIRE(cuda->Predict(g, batches[g], cp.data()).ok());
    CheckClose(cp, hp, tol);

    // One optimizer step from the host's gradients, applied to both backends.
    REQUIRE(host->ApplySparse(h.keys.data(), h.keys.size(), h.grads.data(), h.counts.data()).ok());
    REQUIRE(cuda->ApplySparse(h.keys.data(), h.keys.size(), h.grads.data(), h.counts.data()).ok());
    REQUIRE(host->ApplyDense(h.dense.data()).ok());
    REQUIRE(cuda->ApplyDense(h.dense.data()).ok());
    std::vector<uint32_t> hc, cc;
    // The same gradients through the same update math: bitwise equal rows.
    CHECK(RowFloats(*cuda, o.spec, h.keys, &cc) == RowFloats(*host, o.spec, h.keys, &hc));
    CHECK(cc == hc);  // freq and last pass
    DenseState hs, cs;
    REQUIRE(host->GetDenseState(&hs).ok());
    REQUIRE(cuda->GetDenseState(&cs).ok());
    CHECK(cs.steps == hs.steps);
    CheckClose(cs.params, hs.params, 1e-5);
    CheckClose(cs.m, hs.m, 1e-5);
    CheckClose(cs.v, hs.v, 1e-5);
  }
}

TEST_CASE("cuda: gradients, predictions and optimizer steps match the host backend") {
  if (NoGpu()) return;
  for (int g = 1; g <= 2; ++g) {
    CAPTURE(g);
    CompareOneStep(g, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam);
    CompareOneStep(g, SparseOptimizerKind::kSgd, DenseOptimizerKind::kSgd);
    CompareOneStep(g, SparseOptimizerKind::kRowwiseAdagrad, DenseOptimizerKind::kAdam);
    CompareOneStep(g, SparseOptimizerKind::kAdam, DenseOptimizerKind::kAdam);
    CompareOneStep(g, SparseOptimizerKind::kFtrl, DenseOptimizerKind::kAdam);
    CompareOneStep(g, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam, {1, 3});  // mean pooling
    CompareOneStep(g, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam, {1, 3}, ModelKind::kDeepFm);
    CompareOneStep(g, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam, {}, ModelKind::kDcn);
    CompareOneStep(g, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam, {1}, ModelKind::kDcn, 3);
    CompareOneStep(g, SparseOptimizerKind::kFtrl, DenseOptimizerKind::kAdam, {2}, ModelKind::kWdl);
    CompareOneStep(g, SparseOptimizerKind::kAdam, DenseOptimizerKind::kAdam, {}, ModelKind::kWdl);
    CompareOneStep(g, SparseOptimizerKind::kRowwiseAdagrad, DenseOptimizerKind::kAdam, {}, ModelKind::kDlrm);
  }
}

// --row-dtype bf16 over the CUDA backend (WithRowDtype): staged bf16 rows widen, one step
// trains, and Export rounds the backend's own f32 rows to nearest even; the rounded rows
// agree with the host backend's within a bf16 ulp.
TEST_CASE("cuda: bf16 rows widen as they are staged and round as they are exported") {
  if (NoGpu()) return;
  HbmOptions o = SmallModel(1, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam);
  ModelSpec stored = o.spec;
  stored.row_dtype = RowDtype::kBf16;
  std::unique_ptr<HbmPs> inner;
  const Status made = NewCudaHbmPs(o, &inner);
  REQUIRE_MESSAGE(made.ok(), made.ToString());
  HbmPs* cuda_f32 = inner.get();
  auto cuda = WithRowDtype(std::move(inner), RowLayoutOf(stored));
  auto host = WithRowDtype(NewHostHbmPs(o), RowLayoutOf(stored));
  const std::vector<Batch> batches = {RandomBatch(o.spec, 48, 7)};
  Stage(*cuda, stored, batches, 1);
  Stage(*host, stored, batches, 1);
  WorkerGrads g;
  REQUIRE(host->ComputeGradients(0, batches[0], 1.0f / 48, &g).ok());
  REQUIRE(host->ApplySparse(g.keys.data(), g.keys.size(), g.grads.data(), g.counts.data()).ok());
  REQUIRE(cuda->ApplySparse(g.keys.data(), g.keys.size(), g.grads.data(), g.counts.data()).ok());
  const RowLayout narrow = RowLayoutOf(stored), wide = RowLayoutOf(o.spec);
  std::vector<uint8_t> from_cuda(g.keys.size() * narrow.bytes()), from_host(from_cuda.size());
  std::vector<uint8_t> f32(g.keys.size() * wide.bytes()), want(from_cuda.size());
  REQUIRE(cuda->Export(g.keys.data(), g.keys.size(), from_cuda.data()).ok());
  REQUIRE(host->Export(g.keys.data(), g.keys.size(), from_host.data()).ok());
  REQUIRE(cuda_f32->Export(g.keys.data(), g.keys.size(), f32.data()).ok());
  ConvertRows(wide, f32.data(), g.keys.size(), narrow, want.data());
  CHECK(from_cuda == want);
  std::vector<float> c(wide.floats()), h(wide.floats());
  for (size_t i = 0; i < g.keys.size(); ++i) {
    narrow.LoadFloats(&from_cuda[i * narrow.bytes()], c.data());
    narrow.LoadFloats(&from_host[i * narrow.bytes()], h.data());
    CheckClose(c, h, 1.0 / 128);
  }
}

TEST_CASE("cuda: a missing key and an oversized batch are errors, not zeros") {
  if (NoGpu()) return;
  const HbmOptions o = SmallModel(1, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam);
  std::unique_ptr<HbmPs> cuda;
  REQUIRE(NewCudaHbmPs(o, &cuda).ok());
  const Batch b = RandomBatch(o.spec, 16, 3);
  REQUIRE(!b.keys.empty());
  Batch partial = b;  // every key of b but its first
  partial.keys.erase(std::remove(partial.keys.begin(), partial.keys.end(), b.keys.front()), partial.keys.end());
  Stage(*cuda, o.spec, {partial}, 1);
  WorkerGrads g;
  const Status missing = cuda->ComputeGradients(0, b, 1.0f, &g);
  CHECK(missing.code() == Status::Code::kNotFound);
  CHECK(missing.message().find(std::to_string(b.keys.front())) != std::string::npos);
  Stage(*cuda, o.spec, {b}, 2);
  CHECK(cuda->ComputeGradients(0, b, 1.0f, &g).ok());
  CHECK(cuda->ComputeGradients(0, RandomBatch(o.spec, 65, 5), 1.0f, &g).code() == Status::Code::kInvalidArgument);
}

// Stages every key of the train and eval batches, trains three epochs over the train
// batches (one worker, bulk-synchronous steps) and returns the eval logloss.
double TrainAndEval(HbmPs& ps, const ModelSpec& spec, const std::vector<Batch>& train, const Batch& eval) {
  std::vector<Batch> all = train;
  all.push_back(eval);
  Stage(ps, spec, all, 1);
  const float scale = 1.0f / static_cast<float>(train.front().num_examples);
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (const Batch& b : train) {
      WorkerGrads g;
      REQUIRE(ps.ComputeGradients(0, b, scale, &g).ok());
      REQUIRE(ps.ApplySparse(g.keys.data(), g.keys.size(), g.grads.data(), g.counts.data()).ok());
      REQUIRE(ps.ApplyDense(g.dense.data()).ok());
    }
  }
  std::vector<float> probs(eval.num_examples);
  REQUIRE(ps.Predict(0, eval, probs.data()).ok());
  double loss = 0;
  for (int i = 0; i < eval.num_examples; ++i) {
    const double p = std::clamp(static_cast<double>(probs[i]), 1e-7, 1 - 1e-7);
    loss -= eval.labels[i] > 0.5f ? std::log(p) : std::log(1 - p);
  }
  return loss / eval.num_examples;
}

// A short training run of `kind` on both backends: eval loglosses within 1e-4.
void CheckShortRun(ModelKind kind) {
  HbmOptions o = SmallModel(1, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam);
  o.spec.kind = kind;
  o.spec.bottom_mlp = {16};
  std::vector<Batch> train;
  for (int i = 0; i < 10; ++i) train.push_back(RandomBatch(o.spec, 64, 1000 + i));
  const Batch eval = RandomBatch(o.spec, 64, 5000);
  auto host = NewHostHbmPs(o);
  std::unique_ptr<HbmPs> cuda;
  REQUIRE(NewCudaHbmPs(o, &cuda).ok());
  const double h = TrainAndEval(*host, o.spec, train, eval);
  const double c = TrainAndEval(*cuda, o.spec, train, eval);
  CHECK(c == doctest::Approx(h).epsilon(1e-4));
}

TEST_CASE("cuda: a short training run reaches the host backend's eval logloss") {
  if (NoGpu()) return;
  CheckShortRun(ModelKind::kDnn);
  CheckShortRun(ModelKind::kDcn);
  CheckShortRun(ModelKind::kWdl);
  CheckShortRun(ModelKind::kDlrm);
}

// Every key of slot 0 replaced by one token: a key of about 1.5 B occurrences, more than the
// scatter sums in one thread.
Batch HotKeyBatch(const ModelSpec& spec, int B, uint64_t seed) {
  Batch b = RandomBatch(spec, B, seed);
  for (int i = 0; i < B; ++i) {
    const size_t seg = static_cast<size_t>(i) * spec.num_slots;
    for (uint32_t j = b.offsets[seg]; j < b.offsets[seg + 1]; ++j) b.keys[j] = SlotKey(0, 1);
  }
  return b;
}

TEST_CASE("cuda: a key in most examples of a batch gets the host's gradient, the same every time") {
  if (NoGpu()) return;
  const HbmOptions o = SmallModel(1, SparseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam);
  const Batch b = HotKeyBatch(o.spec, 64, 21);
  REQUIRE(std::count(b.keys.begin(), b.keys.end(), SlotKey(0, 1)) > 64);
  auto host = NewHostHbmPs(o);
  std::unique_ptr<HbmPs> cuda;
  REQUIRE(NewCudaHbmPs(o, &cuda).ok());
  Stage(*host, o.spec, {b}, 1);
  Stage(*cuda, o.spec, {b}, 1);
  WorkerGrads h, c, again;
  REQUIRE(host->ComputeGradients(0, b, 1.0f / 64, &h).ok());
  REQUIRE(cuda->ComputeGradients(0, b, 1.0f / 64, &c).ok());
  REQUIRE(cuda->ComputeGradients(0, b, 1.0f / 64, &again).ok());
  CHECK(c.keys == h.keys);
  CheckClose(c.grads, h.grads, 1e-5);
  CHECK(again.grads == c.grads);
}

TEST_CASE("cuda: a step of a job of one worker kept on the GPU equals its three calls, bitwise") {
  if (NoGpu()) return;
  for (SparseOptimizerKind sparse : {SparseOptimizerKind::kAdagrad, SparseOptimizerKind::kFtrl}) {
    const HbmOptions o = SmallModel(1, sparse, DenseOptimizerKind::kAdam);
    std::vector<Batch> batches = {HotKeyBatch(o.spec, 64, 31)};
    for (int i = 0; i < 4; ++i) batches.push_back(RandomBatch(o.spec, 64, 40 + i));
    std::unique_ptr<HbmPs> fused, calls;
    REQUIRE(NewCudaHbmPs(o, &fused).ok());
    REQUIRE(NewCudaHbmPs(o, &calls).ok());
    CheckSameSteps(*fused, true, *calls, false, o.spec, batches);
  }
}

}  // namespace
}  // namespace strata
