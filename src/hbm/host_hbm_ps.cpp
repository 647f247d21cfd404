// Host HBM-PS backend: G virtual devices on CPU threads. Rows of the pass live in G
// HostTable shards (DeviceShard), in two sets: the active one trains, the standby one is
// filled by the Stage-in thread, and SwapIn flips an index. The dense parameters have one
// replica, since every virtual device of a rank shares its memory and all replicas would
// be identical anyway.
// Workers' forward/backward run concurrently (one DenseModel::Workspace each); the products go
// through oneDNN (strata/model/gemm.h), on an OpenMP team of the rank's threads only when one
// worker runs at a time (HbmOptions::gemm_threads). A lone worker also finds its batch's
// rows and pools its examples on the rank's threads (pool_, which ApplySparse and Export
// use after the workers), and its TrainAlone updates the rows it found without finding
// them again. Told which batch comes next, TrainAlone builds that batch's index on a second
// thread while the first scatters (both serial phases), and both then share the dense and
// sparse updates (UpdateBesideScatter). The loops over keys and rows spread
// through the tables (lookups, stage-in, pooling, TrainAlone's updates) prefetch what they
// reach next. A dnn in bf16 pools straight into the MLP's bf16 input and scatters from its
// bf16 input gradient (rounded_input_).
#include <cblas.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "hbm/batch_index.h"
#include "hbm/host_table.h"
#include "strata/common/partition.h"
#include "strata/common/prefetch.h"
#include "strata/common/row.h"
#include "strata/common/thread_pool.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/dense_model.h"
#include "strata/model/pooling.h"
#include "strata/model/optimizer.h"
#include "strata/model/update_kernels.h"

namespace strata {
namespace {

class HostHbmPs final : public HbmPs {
 public:
  explicit HostHbmPs(const HbmOptions& o)
      : spec_(o.spec), layout_(RowLayoutOf(o.spec)), model_(o.spec), precision_(o.dense_precision), pool_(std::max(1, o.threads)),
        optimizer_(o.spec.dense_optimizer, o.spec.lr_dense, model_.num_params()) {
    for (TableSet& set : sets_) set.shards.assign(static_cast<size_t>(o.workers), HostTable(layout_.bytes()));
    const int gemm_threads = o.gemm_threads();
    for (int g = 0; g < o.workers; ++g) {
      workers_.emplace_back(model_.MakeWorkspace(o.max_batch, gemm_threads, precision_));
    }
    params_.resize(model_.num_params());
    model_.InitParams(spec_.seed, params_.data());
    // OpenBLAS runs only the output layer's dot products, too small to share: a second
    // OpenBLAS thread would gain nothing and spin (sched_yield) between steps, taking a core.
    openblas_set_num_threads(1);
  }

  int num_workers() const override { return static_cast<int>(workers_.size()); }
  size_t num_dense_params() const override { return model_.num_params(); }
  std::string name() const override { return "host"; }

  Status BeginPass(int pass, size_t expected_keys) override {
    active().Reset(pass, expected_keys);
    return Status::OK();
  }

  Status Insert(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return active().Insert(keys, n, rows, layout_.bytes());
  }

  Status BeginStage(int pass, size_t expected_keys) override {
    standby().Reset(pass, expected_keys);
    return Status::OK();
  }

  void ReserveStage(size_t expected_keys) override { standby().Reserve(expected_keys); }

  Status Stage(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return standby().Insert(keys, n, rows, layout_.bytes());
  }

  Status SwapIn() override {
    active_ ^= 1;
    return Status::OK();
  }

  // Each row straight from its active entry into its standby one, on the rank's threads:
  // distinct keys' entries are distinct, and lookups change no table.
  Status StageFromActive(const uint64_t* keys, size_t n, size_t /*row_bytes*/) override {
    const std::array<TableSet*, 2> sets = {&active(), &standby()};
    return RowsInChunks(sets, keys, n, pool_.size(), "StageFromActive", [&](size_t, const std::array<uint8_t*, 2>& rows) {
      std::memcpy(rows[1], rows[0], layout_.bytes());
    });
  }

  Status Export(const uint64_t* keys, size_t n, uint8_t* rows) override {
    const size_t rb = layout_.bytes();
    return ForEachRowInChunks(keys, n, pool_.size(), "Export",
                              [&](size_t i, const uint8_t* row) { std::memcpy(rows + i * rb, row, rb); });
  }

  Status ComputeGradients(int worker, const Batch& batch, float grad_scale, WorkerGrads* out) override {
    Worker* w = &workers_[worker];
    return Gradients(w, batch, grad_scale, out, [&](const auto* dinput) { Scatter(batch, *w, dinput, out); });
  }

  void SetRateFactor(double factor) override {
    lr_sparse_ = static_cast<float>(spec_.lr_sparse * factor);
    optimizer_.set_lr(static_cast<float>(spec_.lr_dense * factor));
  }

  Status Predict(int worker, const Batch& batch, float* probs) override {
    Worker& w = workers_[worker];
    const int B = batch.num_examples;
    if (B == 0) return Status::OK();
    STRATA_RETURN_IF_ERROR(IndexBatch(batch, &w));
    PoolFp32(batch, &w);
    model_.Forward(params_.data(), w.input.data(), B, &w.ws, probs);
    for (int i = 0; i < B; ++i) probs[i] = 1.0f / (1.0f + std::exp(-probs[i]));
    return Status::OK();
  }

  Status ApplySparse(const uint64_t* keys, size_t n, const float* grads, const uint32_t* counts) override {
    const int dim = spec_.row_dim();
    return ForEachRowInChunks(keys, n, pool_.size(), "ApplySparse",
                              [&](size_t i, uint8_t* row) { UpdateRow(row, grads + i * dim, counts[i]); });
  }

  // HbmPs::TrainAlone, whose ApplySparse updates the rows the batch's index found rather
  // than finding them again.
  Status TrainAlone(const Batch& batch, const Batch* next, float grad_scale, WorkerGrads* out) override {
    Worker* w = &workers_[0];
    if (next != nullptr && batch.num_examples > 0 && StepThreads() >= 2) {
      return Gradients(w, batch, grad_scale, out,
                       [&](const auto* dinput) { UpdateBesideScatter(batch, *next, w, dinput, out); });
    }
    STRATA_RETURN_IF_ERROR(
        Gradients(w, batch, grad_scale, out, [&](const auto* dinput) { Scatter(batch, *w, dinput, out); }));
    InChunks(out->keys.size(), pool_.size(), [&](size_t begin, size_t end) { UpdateRows(*w, *out, begin, end); });
    return ApplyDense(out->dense.data());
  }

  Status ApplyDense(const float* grad) override {
    optimizer_.Step(params_.data(), grad, params_.size(),
                    [&](size_t n, const auto& part) { InChunks(n, pool_.size(), part); });
    return Status::OK();
  }

  Status GetDenseState(DenseState* state) const override {
    state->params = params_;
    state->steps = optimizer_.steps();
    state->m = optimizer_.m();
    state->v = optimizer_.v();
    return Status::OK();
  }

  Status SetDenseState(const DenseState& state) override {
    if (state.params.size() != params_.size()) {
      return Status::InvalidArgument("dense state has " + std::to_string(state.params.size()) +
                                     " parameters, the model has " + std::to_string(params_.size()));
    }
    params_ = state.params;
    return optimizer_.Restore(state.steps, state.m, state.v);
  }

 private:
  struct Worker {
    explicit Worker(DenseModel::Workspace workspace) : ws(std::move(workspace)) {}

    DenseModel::Workspace ws;
    BatchIndex index;
    BatchIndex next_index;            // next_for's, built during the step before it
    const Batch* next_for = nullptr;  // or null: no index built ahead
    std::vector<uint8_t*> rows;  // the index's keys' rows
    std::vector<float> input;   // (B, input width)
    std::vector<float> dinput;  // (B, input width)
    std::vector<float> example;  // rounded_input_: each pooling part's example before its rounding
    std::vector<float> logits;  // (B), then dlogits
  };

  // One pass's rows: a HostTable per virtual device.
  struct TableSet {
    int pass = 0;
    std::vector<HostTable> shards;

    void Reset(int p, size_t expected_keys) {
      pass = p;
      for (HostTable& t : shards) t.Reset(ShardCapacity(expected_keys, shards.size()));
    }
    void Reserve(size_t expected_keys) {
      for (HostTable& t : shards) t.Reserve(ShardCapacity(expected_keys, shards.size()));
    }
    HostTable& Shard(uint64_t key) { return shards[DeviceShard(key, static_cast<int>(shards.size()))]; }
    Status Insert(const uint64_t* keys, size_t n, const uint8_t* rows, size_t row_bytes) {
      constexpr size_t kAhead = 16;  // keys between a slot's prefetch and its probe
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) Shard(keys[i + kAhead]).PrefetchSlot(keys[i + kAhead]);
        STRATA_RETURN_IF_ERROR(Shard(keys[i]).Insert(keys[i], rows + i * row_bytes));
      }
      return Status::OK();
    }
  };

  // ComputeGradients of w's batch up to the model's input gradient, which goes to
  // finish(dinput) (floats or bf16 roundings) to be scattered.
  template <typename Finish>
  Status Gradients(Worker* w, const Batch& batch, float grad_scale, WorkerGrads* out, const Finish& finish) {
    const int B = batch.num_examples;
    if (B == 0) {
      w->next_for = nullptr;
      out->SetEmpty(model_.num_params());
      return Status::OK();
    }
    out->examples = B;
    out->dense.resize(model_.num_params());
    STRATA_RETURN_IF_ERROR(IndexBatch(batch, w));
    w->logits.resize(B);
    if (rounded_input_) {
      finish(ModelStepRounded(batch, grad_scale, w, out));
    } else {
      finish(ModelStep(batch, grad_scale, w, out));
    }
    return Status::OK();
  }

  // The model's forward and backward on the batch w has indexed: the loss and the dense
  // gradient into out; returns the gradient of the model's input (B, input width).
  const float* ModelStep(const Batch& batch, float grad_scale, Worker* w, WorkerGrads* out) {
    const int B = batch.num_examples;
    PoolFp32(batch, w);
    model_.Forward(params_.data(), w->input.data(), B, &w->ws, w->logits.data(), precision_);
    out->loss_sum = LossAndGrad(w->logits.data(), batch.labels.data(), B, grad_scale, w->logits.data());
    w->dinput.resize(w->input.size());
    model_.Backward(params_.data(), w->input.data(), B, w->logits.data(), &w->ws, out->dense.data(),
                    w->dinput.data(), precision_);
    ScaleMeanSlots(batch, mean_, spec_.row_dim(), model_.input_width(), w->dinput.data());
    return w->dinput.data();
  }

  // ModelStep when rounded_input_: the MLP's input pooled straight into its bf16 rounding,
  // and its gradient returned as the bf16 roundings the first layer's product wrote.
  const uint16_t* ModelStepRounded(const Batch& batch, float grad_scale, Worker* w, WorkerGrads* out) {
    const int B = batch.num_examples;
    const Mlp& mlp = model_.mlp();
    PoolInto(batch, w, mlp.RoundedInput(&w->ws.mlp, B));
    mlp.ForwardRounded(params_.data(), B, &w->ws.mlp, w->logits.data());
    out->loss_sum = LossAndGrad(w->logits.data(), batch.labels.data(), B, grad_scale, w->logits.data());
    return mlp.BackwardRounded(params_.data(), B, w->logits.data(), &w->ws.mlp, out->dense.data());
  }

  TableSet& active() { return sets_[active_]; }
  TableSet& standby() { return sets_[active_ ^ 1]; }

  // fn(i, rows) for each i in [begin, end) in order, rows[s]: keys[i]'s row in sets[s] or
  // nullptr. Each Find would miss the cache three times (slot, key, row), so the loop loads
  // the slots and then the rows of the keys a few places ahead.
  template <size_t N, typename Fn>
  static void ForEachRow(const std::array<TableSet*, N>& sets, const uint64_t* keys, size_t begin, size_t end,
                         const Fn& fn) {
    constexpr size_t kAhead = 8;  // keys between PrefetchRow and the use; PrefetchSlot twice as far
    for (size_t i = begin; i < end; ++i) {
      std::array<uint8_t*, N> rows;
      for (size_t s = 0; s < N; ++s) {
        if (i + 2 * kAhead < end) sets[s]->Shard(keys[i + 2 * kAhead]).PrefetchSlot(keys[i + 2 * kAhead]);
        if (i + kAhead < end) sets[s]->Shard(keys[i + kAhead]).PrefetchRow(keys[i + kAhead]);
        rows[s] = sets[s]->Shard(keys[i]).Find(keys[i]);
      }
      fn(i, rows);
    }
  }

  // ForEachRow over [0, n) in chunks of at least a thousand keys, on up to `threads` of
  // the rank's threads (1: the caller's alone), fn(i, rows) for each key present in every
  // set; a missing row is an error naming `what` and the key, and fn is not called for it.
  template <size_t N, typename Fn>
  Status RowsInChunks(const std::array<TableSet*, N>& sets, const uint64_t* keys, size_t n, int threads,
                      const char* what, const Fn& fn) {
    Status missing;
    std::mutex mu;
    InChunks(n, threads, [&](size_t begin, size_t end) {
      ForEachRow(sets, keys, begin, end, [&](size_t i, const std::array<uint8_t*, N>& rows) {
        if (std::find(rows.begin(), rows.end(), nullptr) == rows.end()) return fn(i, rows);
        std::lock_guard lock(mu);
        missing = Missing(what, keys[i]);
      });
    });
    return missing;
  }

  // RowsInChunks over the active set: fn(i, row).
  template <typename Fn>
  Status ForEachRowInChunks(const uint64_t* keys, size_t n, int threads, const char* what, const Fn& fn) {
    const std::array<TableSet*, 1> sets = {&active()};
    return RowsInChunks(sets, keys, n, threads, what,
                        [&](size_t i, const std::array<uint8_t*, 1>& rows) { fn(i, rows[0]); });
  }

  // body(begin, end) over [0, n) in chunks of at least a thousand, on up to `threads` of the
  // rank's threads (1: in turn on the caller's).
  template <typename Body>
  void InChunks(size_t n, int threads, const Body& body) {
    const size_t chunks = std::min<size_t>(static_cast<size_t>(threads) * 4, (n + 1023) / 1024);
    const auto chunk = [&](size_t c) { body(n * c / chunks, n * (c + 1) / chunks); };
    if (threads > 1) {
      pool_.ParallelFor(chunks, chunk);
    } else {
      for (size_t c = 0; c < chunks; ++c) chunk(c);
    }
  }

  // The sparse optimizer's step on one row with its summed gradient g; counts its
  // occurrences and stamps the pass.
  void UpdateRow(uint8_t* row, const float* g, uint32_t count) {
    ApplySparseRow(spec_, lr_sparse_, RowLayout::Embedding(row), layout_.State(row), g);
    layout_.SetFreq(row, layout_.Freq(row) + count);
    layout_.SetLastPass(row, static_cast<uint32_t>(active().pass));
  }

  // The rank's threads one worker's step may use: all of them when it is the only worker,
  // else its own thread alone (the workers run side by side on the rank's threads).
  int StepThreads() const { return workers_.size() == 1 ? pool_.size() : 1; }

  static Status Missing(const char* what, uint64_t key) {
    return Status::NotFound(std::string(what) + ": key " + std::to_string(key) + " not in the HBM-PS");
  }

  // The batch's gather index (built now, or during the step before when that step was told
  // this batch came next), and the rows of its distinct keys.
  Status IndexBatch(const Batch& batch, Worker* w) {
    if (w->next_for == &batch && w->next_index.local_ids().size() == batch.keys.size()) {
      std::swap(w->index, w->next_index);
    } else {
      w->index.Build(batch);
    }
    w->next_for = nullptr;
    const std::vector<uint64_t>& keys = w->index.keys();
    w->rows.resize(keys.size());
    return ForEachRowInChunks(keys.data(), keys.size(), StepThreads(), "a batch",
                              [&](size_t i, uint8_t* row) { w->rows[i] = row; });
  }

  // The MLP input of the batch w has indexed, in w->input: sum-pooled (or mean-pooled:
  // model/pooling.h) embeddings per slot, then the dense features.
  void PoolFp32(const Batch& batch, Worker* w) {
    const int in = model_.input_width();
    w->input.resize(static_cast<size_t>(batch.num_examples) * in);
    PoolInto(batch, w, w->input.data());
    ScaleMeanSlots(batch, mean_, spec_.row_dim(), in, w->input.data());
  }

  // Sum pooling of the batch w has indexed into input (B, input width) of floats, or of bf16
  // roundings in rows of Mlp::bf16_input_stride (InputStride), then the dense features. An
  // example is pooled in fp32 (PoolExample) into its row of a float input, or into a buffer
  // the L1 cache holds and then rounded into its row of a bf16 one. Examples are
  // independent, so a lone worker splits them over the rank's threads.
  template <typename T>
  void PoolInto(const Batch& batch, Worker* w, T* input) {
    const int in = model_.input_width(), stride = InputStride<T>(), B = batch.num_examples;
    const int parts = std::min(StepThreads(), B);
    if constexpr (!std::is_same_v<T, float>) w->example.resize(static_cast<size_t>(parts) * in);
    const auto pool_part = [&](int part) {
      for (int i = B * part / parts, end = B * (part + 1) / parts; i < end; ++i) {
        if (i + 1 < end) PrefetchEmbeddings(batch, *w, i + 1);
        T* x = input + static_cast<size_t>(i) * stride;
        if constexpr (std::is_same_v<T, float>) {
          PoolExample(batch, *w, i, x);
        } else {
          float* example = &w->example[static_cast<size_t>(part) * in];
          PoolExample(batch, *w, i, example);
          Kernels().to_bf16(x, example, static_cast<size_t>(in));
        }
      }
    };
    if (parts > 1) {
      pool_.ParallelFor(parts, [&](size_t p) { pool_part(static_cast<int>(p)); });
    } else {
      pool_part(0);
    }
  }

  // Example i's input row x: its slots' sums, then its dense features.
  void PoolExample(const Batch& batch, const Worker& w, int i, float* x) const {
    const int dim = spec_.row_dim(), S = batch.num_slots, dense = batch.num_dense;
    Kernels().pool_example(x, w.rows.data(), w.index.local_ids().data(), &batch.offsets[static_cast<size_t>(i) * S],
                           S, static_cast<size_t>(dim));
    std::copy_n(&batch.dense[static_cast<size_t>(i) * dense], dense, x + S * dim);
  }

  // Loads the embeddings example i pools into the cache, ahead of its pooling: the rows
  // are spread over the table, and most rows' embeddings straddle two cache lines.
  void PrefetchEmbeddings(const Batch& batch, const Worker& w, int i) const {
    const size_t S = static_cast<size_t>(batch.num_slots), bytes = static_cast<size_t>(spec_.row_dim()) * sizeof(float);
    const std::vector<uint32_t>& ids = w.index.local_ids();
    for (uint32_t k = batch.offsets[i * S]; k < batch.offsets[(i + 1) * S]; ++k) PrefetchSpan(w.rows[ids[k]], bytes);
  }

  // A lone worker's step after its backward, on two threads: this batch's scatter on one
  // and the batch index of next (the batch the next step trains, for its IndexBatch) on the
  // other, both serial; then both take the updates in parts, the dense optimizer's first,
  // then the rows' once the scatter is done. Neither thread waits on the other's serial work
  // nor for a wake-up between them. Each coordinate's and row's update is its own, so the
  // result is TrainAlone's in any split.
  template <typename D>
  void UpdateBesideScatter(const Batch& batch, const Batch& next, Worker* w, const D* dinput, WorkerGrads* out) {
    std::atomic<bool> scattered{false};
    std::atomic<size_t> taken{0};
    optimizer_.Step(params_.data(), out->dense.data(), params_.size(), [&](size_t n, const auto& dense_part) {
      constexpr size_t kDenseGrain = 8192, kRowGrain = 1024;
      const size_t keys = w->index.keys().size();
      const size_t dense_parts = std::max<size_t>(1, n / kDenseGrain);
      const size_t parts = dense_parts + std::max<size_t>(1, keys / kRowGrain);
      pool_.ParallelFor(2, [&](size_t lane) {
        if (lane == 0) {
          Scatter(batch, *w, dinput, out);
          scattered.store(true, std::memory_order_release);
        } else {
          w->next_index.Build(next);
        }
        for (size_t p; (p = taken.fetch_add(1)) < parts;) {
          if (p < dense_parts) {
            dense_part(n * p / dense_parts, n * (p + 1) / dense_parts);
            continue;
          }
          while (!scattered.load(std::memory_order_acquire)) std::this_thread::yield();
          const size_t r = p - dense_parts, row_parts = parts - dense_parts;
          UpdateRows(*w, *out, keys * r / row_parts, keys * (r + 1) / row_parts);
        }
      });
    });
    w->next_for = &next;
  }

  // The sparse optimizer's step on the rows [begin, end) of w's batch index, with out's
  // summed gradients.
  void UpdateRows(const Worker& w, const WorkerGrads& out, size_t begin, size_t end) {
    const size_t dim = static_cast<size_t>(spec_.row_dim());
    constexpr size_t kAhead = 8;  // rows between a row's prefetch and its update
    for (size_t i = begin; i < end; ++i) {
      if (i + kAhead < end) PrefetchSpan(w.rows[i + kAhead], layout_.bytes());
      UpdateRow(w.rows[i], &out.grads[i * dim], out.counts[i]);
    }
  }

  // Sum pooling's backward: each occurrence's key receives its slot's input gradient
  // (already scaled for mean slots), of floats or of bf16 roundings (rows as PoolInto's).
  template <typename D>
  void Scatter(const Batch& batch, const Worker& w, const D* dinput, WorkerGrads* out) const {
    const int dim = spec_.row_dim(), S = batch.num_slots, stride = InputStride<D>();
    out->keys = w.index.keys();
    out->counts = w.index.counts();
    out->grads.assign(out->keys.size() * dim, 0.0f);
    const auto& ids = w.index.local_ids();
    const auto scatter_example = ScatterKernel(dinput);
    for (int i = 0; i < batch.num_examples; ++i) {
      scatter_example(out->grads.data(), ids.data(), &batch.offsets[static_cast<size_t>(i) * S], S,
                      &dinput[static_cast<size_t>(i) * stride], static_cast<size_t>(dim));
    }
  }
  static auto ScatterKernel(const float*) { return Kernels().scatter_example; }
  static auto ScatterKernel(const uint16_t*) { return Kernels().scatter_example_bf16; }

  // The row stride of the model's input and its gradient: of floats, or of bf16 roundings.
  template <typename T>
  int InputStride() const {
    if constexpr (std::is_same_v<T, float>) return model_.input_width();
    return model_.mlp().bf16_input_stride();
  }

  ModelSpec spec_;
  std::vector<uint8_t> mean_ = MeanSlotFlags(spec_);
  float lr_sparse_ = spec_.lr_sparse;  // scheduled (SetRateFactor)
  RowLayout layout_;
  DenseModel model_;
  DensePrecision precision_;
  // A dnn in bf16 whose slots all sum-pool: pooling writes the MLP's bf16 input itself and
  // the scatter reads the bf16 input gradient (Mlp::RoundedInput), neither ever held in
  // fp32; the values and their order are the fp32 input's roundings, so the step is the same.
  const bool rounded_input_ = precision_ == DensePrecision::kBf16 && model_.mlp_alone() &&
                              model_.mlp().relu_layers() >= 1 && mean_.empty();
  ThreadPool pool_;
  // The active set trains; the standby set is staged by another thread (HbmPs).
  TableSet sets_[2];
  int active_ = 0;
  std::vector<Worker> workers_;
  std::vector<float> params_;
  DenseOptimizer optimizer_;
};

}  // namespace

std::unique_ptr<HbmPs> NewHostHbmPs(const HbmOptions& options) {
  return std::make_unique<HostHbmPs>(options);
}

}  // namespace strata
