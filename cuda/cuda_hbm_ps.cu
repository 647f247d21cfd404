// CUDA HBM-PS backend: G workers, worker g on device HbmOptions::devices[g] (chosen by
// CudaDevicesFor: by local rank, or as --cuda-devices lists them; several workers may share
// a device, each with its own tables, streams and cuBLAS handle). The pass's rows are split
// over the G workers' hash tables by DeviceShard(key, G); a worker resolves its batch's keys
// in every shard, through peer access where a shard is on another GPU (enabled between all
// the devices; required when they differ), and gathers the rows it needs once per distinct
// key. Dense parameters and Adam moments are replicated on every GPU and
// updated by the same kernel from the same summed gradient, so replicas stay identical.
// Gradient sums across workers and ranks are the trainer's (it owns the exchange); this
// backend returns each worker's gradients in host memory like the host backend does.
//
// Each GPU holds its shard of two table sets: the active one trains, the standby one is
// staged by the Stage-in thread on its own stream with its own upload buffers; SwapIn flips
// an index. Every public call returns after its device work has finished. Thread safety as
// HbmPs: ComputeGradients/Predict of different workers may run concurrently (each uses its
// own GPU, stream, cuBLAS handle and scratch; peer tables are only read), and BeginStage/
// Stage beside any call but SwapIn.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "batch_index.cuh"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "fm_kernels.cuh"
#include "hash_table.cuh"
#include "mlp_cublas.cuh"
#include "optimizer_kernels.cuh"
#include "pool_kernels.cuh"
#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/mlp.h"
#include "strata/model/optimizer.h"
#include "strata/model/pooling.h"

namespace strata {
namespace gpu {
namespace {

// Makes device current for the calling thread for a scope. The previous device is put back.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

// One GPU: its shard of the pass, its dense replica, and scratch for its worker's batches.
struct Worker {
  Worker(int dev, size_t row_bytes, const Mlp& model)
      : device(dev), tables{GpuHashTable(row_bytes), GpuHashTable(row_bytes)}, mlp(model) {}

  int device;
  // Declared before everything bound to it (the cuBLAS handle in mlp), so destroyed after.
  OwnedStream stream;
  // The two table sets' shards on this GPU (CudaHbmPs::active_ picks the training one),
  // and per set every shard's view, for lookups across shards: views[set] (G).
  GpuHashTable tables[2];
  DeviceBuffer<TableView> views[2];
  // The Stage-in thread's own stream and upload buffers, so staging overlaps training.
  struct {
    OwnedStream stream;
    DeviceBuffer<uint64_t> keys;
    DeviceBuffer<uint8_t> rows;
  } stage;
  DeviceBuffer<float> params, m, v, grad;
  CublasMlp mlp;
  DeviceBatchIndex index;
  // Batch inputs.
  DeviceBuffer<uint64_t> keys;
  DeviceBuffer<uint32_t> offsets;
  DeviceBuffer<float> labels, dense;
  DeviceBuffer<uint8_t> shard;
  DeviceBuffer<uint8_t> mean;  // MeanSlotFlags, uploaded with each batch (S bytes)
  // Working buffers; `rows`, `missing`, `counts` and `staged` also serve the bulk calls.
  DeviceBuffer<uint32_t*> rows;
  DeviceBuffer<uint32_t> missing, counts;
  DeviceBuffer<uint8_t> staged;
  DeviceBuffer<float> emb, input, dinput, logits, dparams, grads;
  DeviceBuffer<double> losses;
  std::vector<uint8_t> host_shard;
  std::vector<double> host_losses;
};

class CudaHbmPs final : public HbmPs {
 public:
  explicit CudaHbmPs(const HbmOptions& o)
      : spec_(o.spec), mean_(MeanSlotFlags(o.spec)), layout_(RowLayoutOf(o.spec)), mlp_(o.spec), max_batch_(o.max_batch) {
    for (int g = 0; g < o.workers; ++g) {
      const int device = o.devices.empty() ? g : o.devices[g];
      workers_.push_back(std::make_unique<Worker>(device, layout_.bytes(), mlp_));
    }
    bulk_.parts.resize(o.workers);
    staging_.parts.resize(o.workers);
  }

  ~CudaHbmPs() override {
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      if (w->stream != nullptr) cudaStreamSynchronize(w->stream);
      if (w->stage.stream != nullptr) cudaStreamSynchronize(w->stage.stream);
      w.reset();
    }
  }

  Status Init() {
    const int G = num_workers();
    std::vector<float> params(mlp_.num_params());
    mlp_.InitParams(spec_.seed, params.data());
    const size_t P = params.size();
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_RETURN_IF_ERROR(w->stream.Create());
      STRATA_RETURN_IF_ERROR(w->stage.stream.Create());
      STRATA_RETURN_IF_ERROR(Upload(params.data(), P, w->stream, &w->params));
      if (spec_.dense_optimizer == DenseOptimizerKind::kAdam) {
        STRATA_RETURN_IF_ERROR(w->m.Reserve(P));
        STRATA_RETURN_IF_ERROR(w->v.Reserve(P));
        STRATA_CUDA_TRY(cudaMemsetAsync(w->m.get(), 0, P * sizeof(float), w->stream));
        STRATA_CUDA_TRY(cudaMemsetAsync(w->v.get(), 0, P * sizeof(float), w->stream));
      }
      STRATA_RETURN_IF_ERROR(w->mlp.Init(max_batch_, w->stream));
      STRATA_RETURN_IF_ERROR(w->missing.Reserve(1));
      for (const auto& other : workers_) STRATA_RETURN_IF_ERROR(EnablePeer(w->device, other->device, G));
      STRATA_CUDA_TRY(cudaStreamSynchronize(w->stream));
    }
    return Status::OK();
  }

  // Lets device (current) reach peer's memory; nothing to do when they are the same GPU.
  static Status EnablePeer(int device, int peer, int G) {
    if (peer == device) return Status::OK();
    int can = 0;
    STRATA_CUDA_TRY(cudaDeviceCanAccessPeer(&can, device, peer));
    if (!can) {
      return Status::DeviceError("--workers-per-rank " + std::to_string(G) + ": GPU " + std::to_string(device) +
                                 " cannot access GPU " + std::to_string(peer) +
                                 "'s memory (peer access is required between a rank's GPUs)");
    }
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
      return Status::OK();
    }
    STRATA_CUDA_TRY(e);
    return Status::OK();
  }

  int num_workers() const override { return static_cast<int>(workers_.size()); }
  size_t num_dense_params() const override { return mlp_.num_params(); }
  std::string name() const override { return "cuda"; }

  Status BeginPass(int pass, size_t expected_keys) override { return ResetSet(active_, pass, expected_keys, false); }

  Status Insert(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return InsertInto(active_, keys, n, rows, false);
  }

  Status BeginStage(int pass, size_t expected_keys) override {
    return ResetSet(active_ ^ 1, pass, expected_keys, true);
  }

  Status Stage(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return InsertInto(active_ ^ 1, keys, n, rows, true);
  }

  // Staging synchronized its stream before returning, so the staged set is complete.
  Status SwapIn() override {
    active_ ^= 1;
    return Status::OK();
  }

  size_t host_staging_bytes() const override { return bulk_.capacity_bytes() + staging_.capacity_bytes(); }

  Status Export(const uint64_t* keys, size_t n, uint8_t* rows) override {
    const size_t rb = layout_.bytes();
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    bulk_.Split(keys, n, num_workers());
    for (size_t g = 0; g < workers_.size(); ++g) {
      Worker& w = *workers_[g];
      const std::vector<uint32_t>& part = bulk_.parts[g];
      if (part.empty()) continue;
      DeviceScope scope(w.device);
      bulk_.Gather(keys, nullptr, rb, part);
      STRATA_RETURN_IF_ERROR(Upload(bulk_.keys.data(), part.size(), w.stream, &w.keys));
      STRATA_RETURN_IF_ERROR(w.staged.Reserve(part.size() * rb));
      STRATA_RETURN_IF_ERROR(w.tables[active_].Export(w.keys.get(), part.size(),
                                                      reinterpret_cast<uint32_t*>(w.staged.get()), w.stream));
      bulk_.bytes.resize(part.size() * rb);
      STRATA_RETURN_IF_ERROR(Download(w.staged.get(), bulk_.bytes.size(), w.stream, bulk_.bytes.data()));
      STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
      for (size_t i = 0; i < part.size(); ++i) std::memcpy(rows + part[i] * rb, &bulk_.bytes[i * rb], rb);
    }
    bulk_.Release();
    return Status::OK();
  }

  Status ComputeGradients(int worker, const Batch& batch, float grad_scale, WorkerGrads* out) override {
    Worker& w = *workers_[worker];
    const int B = batch.num_examples, dim = spec_.embedding_dim;
    if (B == 0) {
      out->SetEmpty(mlp_.num_params());
      return Status::OK();
    }
    out->examples = B;
    out->dense.resize(mlp_.num_params());
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(Forward(w, batch));
    STRATA_RETURN_IF_ERROR(Upload(batch.labels.data(), B, w.stream, &w.labels));
    STRATA_RETURN_IF_ERROR(w.losses.Reserve(B));
    // dlogits overwrite the logits, as in the host backend.
    STRATA_RETURN_IF_ERROR(LaunchLogLoss(w.logits.get(), w.labels.get(), B, grad_scale, w.logits.get(),
                                         w.losses.get(), w.stream));
    STRATA_RETURN_IF_ERROR(w.dparams.Reserve(mlp_.num_params()));
    STRATA_RETURN_IF_ERROR(w.dinput.Reserve(static_cast<size_t>(B) * mlp_.input_width()));
    STRATA_RETURN_IF_ERROR(
        w.mlp.Backward(w.params.get(), w.input.get(), B, w.logits.get(), w.dparams.get(), w.dinput.get()));
    if (spec_.kind == ModelKind::kDeepFm) {
      STRATA_RETURN_IF_ERROR(LaunchFmGradient(w.input.get(), B, mlp_.input_width(), batch.num_slots, dim,
                                              w.logits.get(), w.dinput.get(), w.stream));
    }
    const size_t k = w.index.distinct();
    STRATA_RETURN_IF_ERROR(w.grads.Reserve(k * dim));
    if (!mean_.empty()) {
      STRATA_RETURN_IF_ERROR(LaunchScaleMeanSlots(w.offsets.get(), w.mean.get(), B, batch.num_slots, dim,
                                                  mlp_.input_width(), w.dinput.get(), w.stream));
    }
    STRATA_RETURN_IF_ERROR(LaunchScatter(w.index.key_start(), w.index.counts(), w.index.sorted_base(),
                                         w.dinput.get(), k, dim, w.grads.get(), w.stream));
    out->keys.resize(k);
    out->counts.resize(k);
    out->grads.resize(k * dim);
    w.host_losses.resize(B);
    STRATA_RETURN_IF_ERROR(Download(w.index.keys(), k, w.stream, out->keys.data()));
    STRATA_RETURN_IF_ERROR(Download(w.index.counts(), k, w.stream, out->counts.data()));
    STRATA_RETURN_IF_ERROR(Download(w.grads.get(), k * dim, w.stream, out->grads.data()));
    STRATA_RETURN_IF_ERROR(Download(w.dparams.get(), mlp_.num_params(), w.stream, out->dense.data()));
    STRATA_RETURN_IF_ERROR(Download(w.losses.get(), B, w.stream, w.host_losses.data()));
    STRATA_RETURN_IF_ERROR(FinishBatch(w));
    out->loss_sum = 0;
    for (double l : w.host_losses) out->loss_sum += l;  // row order, as LossAndGrad sums
    return Status::OK();
  }

  Status Predict(int worker, const Batch& batch, float* probs) override {
    Worker& w = *workers_[worker];
    const int B = batch.num_examples;
    if (B == 0) return Status::OK();
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(Forward(w, batch));
    STRATA_RETURN_IF_ERROR(Download(w.logits.get(), B, w.stream, probs));
    STRATA_RETURN_IF_ERROR(FinishBatch(w));
    for (int i = 0; i < B; ++i) probs[i] = 1.0f / (1.0f + std::exp(-probs[i]));  // as the host backend
    return Status::OK();
  }

  void SetRateFactor(double factor) override {
    lr_sparse_ = static_cast<float>(spec_.lr_sparse * factor);
    lr_dense_ = static_cast<float>(spec_.lr_dense * factor);
  }

  Status ApplySparse(const uint64_t* keys, size_t n, const float* grads, const uint32_t* counts) override {
    const int dim = spec_.embedding_dim;
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    bulk_.Split(keys, n, num_workers());
    Status missing;
    for (size_t g = 0; g < workers_.size(); ++g) {
      Worker& w = *workers_[g];
      const std::vector<uint32_t>& part = bulk_.parts[g];
      if (part.empty()) continue;
      const size_t m = part.size();
      DeviceScope scope(w.device);
      bulk_.Gather(keys, reinterpret_cast<const uint8_t*>(grads), dim * sizeof(float), part);
      part_counts_.resize(m);
      for (size_t i = 0; i < m; ++i) part_counts_[i] = counts[part[i]];
      STRATA_RETURN_IF_ERROR(Upload(bulk_.keys.data(), m, w.stream, &w.keys));
      STRATA_RETURN_IF_ERROR(Upload(bulk_.bytes.data(), bulk_.bytes.size(), w.stream, &w.staged));
      STRATA_RETURN_IF_ERROR(Upload(part_counts_.data(), m, w.stream, &w.counts));
      STRATA_RETURN_IF_ERROR(w.rows.Reserve(m));
      STRATA_CUDA_TRY(cudaMemsetAsync(w.missing.get(), 0xff, sizeof(uint32_t), w.stream));
      // views + g with no shard list: every key is looked up in this GPU's own shard.
      STRATA_RETURN_IF_ERROR(
          ResolveRows(w.views[active_].get() + g, nullptr, w.keys.get(), m, w.rows.get(), w.missing.get(), w.stream));
      STRATA_RETURN_IF_ERROR(LaunchSparseApply(w.rows.get(), reinterpret_cast<const float*>(w.staged.get()),
                                               w.counts.get(), m, spec_, lr_sparse_,
                                               static_cast<uint32_t>(set_pass_[active_]), w.stream));
      uint32_t first_missing = kNoRow;
      STRATA_RETURN_IF_ERROR(Download(w.missing.get(), 1, w.stream, &first_missing));
      STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
      if (first_missing != kNoRow && missing.ok()) {
        missing = Status::NotFound("ApplySparse: key " + std::to_string(bulk_.keys[first_missing]) +
                                   " not in the HBM-PS");
      }
    }
    return missing;  // like the host backend: present rows are updated even when one is missing
  }

  Status ApplyDense(const float* grad) override {
    const size_t P = mlp_.num_params();
    ++steps_;
    const AdamStepScalars k = MakeAdamStepScalars(lr_dense_, DenseOptimizer::kAdamBeta1,
                                                  DenseOptimizer::kAdamBeta2, DenseOptimizer::kAdamEps, steps_);
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_RETURN_IF_ERROR(Upload(grad, P, w->stream, &w->grad));
      if (spec_.dense_optimizer == DenseOptimizerKind::kAdam) {
        STRATA_RETURN_IF_ERROR(LaunchAdamStep(w->params.get(), w->m.get(), w->v.get(), w->grad.get(), P, k, w->stream));
      } else {
        STRATA_RETURN_IF_ERROR(LaunchSgdStep(w->params.get(), w->grad.get(), P, lr_dense_, w->stream));
      }
    }
    return SyncAll();
  }

  Status GetDenseState(DenseState* state) const override {
    const Worker& w = *workers_.front();
    const size_t P = mlp_.num_params();
    const bool adam = spec_.dense_optimizer == DenseOptimizerKind::kAdam;
    DeviceScope scope(w.device);
    state->params.resize(P);
    state->m.resize(adam ? P : 0);
    state->v.resize(adam ? P : 0);
    state->steps = steps_;
    STRATA_RETURN_IF_ERROR(Download(w.params.get(), P, w.stream, state->params.data()));
    if (adam) {
      STRATA_RETURN_IF_ERROR(Download(w.m.get(), P, w.stream, state->m.data()));
      STRATA_RETURN_IF_ERROR(Download(w.v.get(), P, w.stream, state->v.data()));
    }
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    return Status::OK();
  }

  Status SetDenseState(const DenseState& state) override {
    const size_t P = mlp_.num_params();
    if (state.params.size() != P) {
      return Status::InvalidArgument("dense state has " + std::to_string(state.params.size()) +
                                     " parameters, the model has " + std::to_string(P));
    }
    // The host optimizer's checks of steps and moment sizes, with its messages.
    DenseOptimizer check(spec_.dense_optimizer, spec_.lr_dense, P);
    STRATA_RETURN_IF_ERROR(check.Restore(state.steps, state.m, state.v));
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_RETURN_IF_ERROR(Upload(state.params.data(), P, w->stream, &w->params));
      if (!state.m.empty()) {
        STRATA_RETURN_IF_ERROR(Upload(state.m.data(), P, w->stream, &w->m));
        STRATA_RETURN_IF_ERROR(Upload(state.v.data(), P, w->stream, &w->v));
      }
    }
    steps_ = state.steps;
    return SyncAll();
  }

 private:
  // Host-side split of a bulk call's keys (and their records) by device shard.
  struct HostParts {
    std::vector<std::vector<uint32_t>> parts;  // parts[g]: positions (ascending) of shard g's keys
    std::vector<uint64_t> keys;
    std::vector<uint8_t> bytes;

    void Split(const uint64_t* all, size_t n, int G) {
      for (auto& p : parts) p.clear();
      for (size_t i = 0; i < n; ++i) parts[G == 1 ? 0 : DeviceShard(all[i], G)].push_back(static_cast<uint32_t>(i));
    }
    // keys = all[part]; bytes = the item_bytes records of items[part] (when given).
    void Gather(const uint64_t* all, const uint8_t* items, size_t item_bytes, const std::vector<uint32_t>& part) {
      keys.resize(part.size());
      for (size_t i = 0; i < part.size(); ++i) keys[i] = all[part[i]];
      if (items == nullptr) return;
      bytes.resize(part.size() * item_bytes);
      for (size_t i = 0; i < part.size(); ++i) std::memcpy(&bytes[i * item_bytes], items + part[i] * item_bytes, item_bytes);
    }
    // Gives back the memory of a pass's rows (Insert, Export), so that the largest pass's
    // rows do not stay in host memory for the rest of the run.
    void Release() {
      for (auto& p : parts) std::vector<uint32_t>().swap(p);
      std::vector<uint64_t>().swap(keys);
      std::vector<uint8_t>().swap(bytes);
    }
    size_t capacity_bytes() const {
      size_t b = keys.capacity() * sizeof(uint64_t) + bytes.capacity();
      for (const auto& p : parts) b += p.capacity() * sizeof(uint32_t);
      return b;
    }
  };

  // Empties table set `set` for `pass`, on the training streams or (staging) the stage
  // streams, and uploads its views to every GPU.
  Status ResetSet(int set, int pass, size_t expected_keys, bool staging) {
    const size_t capacity = ShardCapacity(expected_keys, workers_.size());
    set_ready_[set] = false;  // until every shard and view is in place
    std::vector<TableView> views;
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_RETURN_IF_ERROR(w->tables[set].Reset(pass, capacity, StreamOf(*w, staging)));
      views.push_back(w->tables[set].view());
    }
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      const cudaStream_t stream = StreamOf(*w, staging);
      STRATA_RETURN_IF_ERROR(Upload(views.data(), views.size(), stream, &w->views[set]));
      STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
    }
    set_pass_[set] = pass;
    set_ready_[set] = true;
    ever_ready_ = true;
    return Status::OK();
  }

  // Inserts (or overwrites) rows into table set `set`, each in its key's shard.
  Status InsertInto(int set, const uint64_t* keys, size_t n, const uint8_t* rows, bool staging) {
    const size_t rb = layout_.bytes();
    HostParts& host = staging ? staging_ : bulk_;
    host.Split(keys, n, num_workers());
    for (size_t g = 0; g < workers_.size(); ++g) {
      Worker& w = *workers_[g];
      const std::vector<uint32_t>& part = host.parts[g];
      if (part.empty()) continue;
      DeviceScope scope(w.device);
      host.Gather(keys, rows, rb, part);
      const cudaStream_t stream = StreamOf(w, staging);
      DeviceBuffer<uint64_t>& dkeys = staging ? w.stage.keys : w.keys;
      DeviceBuffer<uint8_t>& drows = staging ? w.stage.rows : w.staged;
      STRATA_RETURN_IF_ERROR(Upload(host.keys.data(), part.size(), stream, &dkeys));
      STRATA_RETURN_IF_ERROR(Upload(host.bytes.data(), host.bytes.size(), stream, &drows));
      STRATA_RETURN_IF_ERROR(w.tables[set].Insert(dkeys.get(), part.size(),
                                                  reinterpret_cast<const uint32_t*>(drows.get()), stream));
    }
    host.Release();
    return Status::OK();
  }

  static cudaStream_t StreamOf(const Worker& w, bool staging) { return staging ? w.stage.stream : w.stream; }

  // Uploads the batch, builds its index, resolves and gathers its rows from every shard,
  // pools them into the MLP input and runs the forward pass into w.logits. The lookup's
  // outcome is checked by FinishBatch, after the caller's downloads.
  Status Forward(Worker& w, const Batch& batch) {
    const int B = batch.num_examples, S = batch.num_slots, dim = spec_.embedding_dim, G = num_workers();
    const int in = mlp_.input_width();
    if (B > max_batch_) {
      return Status::InvalidArgument("batch of " + std::to_string(B) + " examples exceeds the HBM-PS max_batch " +
                                     std::to_string(max_batch_));
    }
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    const size_t n = batch.keys.size();
    STRATA_RETURN_IF_ERROR(Upload(batch.keys.data(), n, w.stream, &w.keys));
    STRATA_RETURN_IF_ERROR(Upload(batch.offsets.data(), batch.offsets.size(), w.stream, &w.offsets));
    STRATA_RETURN_IF_ERROR(Upload(batch.dense.data(), batch.dense.size(), w.stream, &w.dense));
    if (G > 1) {
      w.host_shard.resize(n);
      for (size_t j = 0; j < n; ++j) w.host_shard[j] = static_cast<uint8_t>(DeviceShard(batch.keys[j], G));
      STRATA_RETURN_IF_ERROR(Upload(w.host_shard.data(), n, w.stream, &w.shard));
    }
    STRATA_RETURN_IF_ERROR(w.index.Build(w.keys.get(), n, w.offsets.get(), B, S, dim, in,
                                         G > 1 ? w.shard.get() : nullptr, w.stream));
    const size_t k = w.index.distinct();
    STRATA_RETURN_IF_ERROR(w.rows.Reserve(k));
    STRATA_RETURN_IF_ERROR(w.emb.Reserve(k * dim));
    STRATA_CUDA_TRY(cudaMemsetAsync(w.missing.get(), 0xff, sizeof(uint32_t), w.stream));
    STRATA_RETURN_IF_ERROR(ResolveRows(w.views[active_].get(), G > 1 ? w.index.shards() : nullptr, w.index.keys(), k,
                                       w.rows.get(), w.missing.get(), w.stream));
    STRATA_RETURN_IF_ERROR(CopyRowsOut(w.rows.get(), k, dim, reinterpret_cast<uint32_t*>(w.emb.get()), w.stream));
    STRATA_RETURN_IF_ERROR(w.input.Reserve(static_cast<size_t>(B) * in));
    STRATA_RETURN_IF_ERROR(LaunchPool(w.offsets.get(), w.index.local_ids(), w.emb.get(), w.dense.get(), B, S, dim,
                                      batch.num_dense, w.input.get(), w.stream));
    if (!mean_.empty()) {
      STRATA_RETURN_IF_ERROR(Upload(mean_.data(), mean_.size(), w.stream, &w.mean));
      STRATA_RETURN_IF_ERROR(LaunchScaleMeanSlots(w.offsets.get(), w.mean.get(), B, S, dim, in, w.input.get(), w.stream));
    }
    STRATA_RETURN_IF_ERROR(w.logits.Reserve(B));
    STRATA_RETURN_IF_ERROR(w.mlp.Forward(w.params.get(), w.input.get(), B, w.logits.get()));
    if (spec_.kind != ModelKind::kDeepFm) return Status::OK();
    return LaunchFmTerm(w.input.get(), B, in, S, dim, w.logits.get(), w.stream);
  }

  // A batch or step needs the active table set complete: not before the first pass, nor
  // after a BeginPass that failed part way (its views may name freed memory).
  Status CheckActiveSet() const {
    if (set_ready_[active_]) return Status::OK();
    return Status::InvalidArgument(!ever_ready_ ? "HBM-PS: a batch before the first pass"
                                                : "HBM-PS: the pass's device tables were not set up (its BeginPass failed)");
  }

  // Waits for the worker's stream and reports a batch key missing from the HBM-PS.
  Status FinishBatch(Worker& w) {
    uint32_t first_missing = kNoRow;
    STRATA_RETURN_IF_ERROR(Download(w.missing.get(), 1, w.stream, &first_missing));
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    if (first_missing == kNoRow) return Status::OK();
    uint64_t key = 0;
    STRATA_RETURN_IF_ERROR(Download(w.index.keys() + first_missing, 1, w.stream, &key));
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    return Status::NotFound("key " + std::to_string(key) + " of the batch is not in the HBM-PS");
  }

  Status SyncAll() {
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_CUDA_TRY(cudaStreamSynchronize(w->stream));
    }
    return Status::OK();
  }

  ModelSpec spec_;
  std::vector<uint8_t> mean_;  // MeanSlotFlags(spec_)
  float lr_sparse_ = spec_.lr_sparse, lr_dense_ = spec_.lr_dense;  // scheduled (SetRateFactor)
  RowLayout layout_;
  Mlp mlp_;
  int max_batch_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int64_t steps_ = 0;
  int active_ = 0;         // the table set in training; the other one is staged
  int set_pass_[2] = {};   // the pass each table set holds
  bool set_ready_[2] = {}; // each set's shards and views complete (ResetSet succeeded)
  bool ever_ready_ = false;
  // Host staging of the bulk calls (Insert, Export, ApplySparse), which never overlap, and
  // of the Stage-in thread's calls, which may overlap them.
  HostParts bulk_, staging_;
  std::vector<uint32_t> part_counts_;
};

}  // namespace
}  // namespace gpu

int CudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "no driver" error
    return 0;
  }
  return n;
}

int64_t CudaMinFreeBytes(const std::vector<int>& devices) {
  const int visible = CudaDeviceCount();
  int64_t least = -1;
  for (int d : devices) {
    if (d < 0 || d >= visible) return 0;
    gpu::DeviceScope scope(d);
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    least = least < 0 ? static_cast<int64_t>(free) : std::min(least, static_cast<int64_t>(free));
  }
  return std::max<int64_t>(least, 0);
}

std::string CudaDeviceName(int device) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown";
  }
  return prop.name;
}

Status NewCudaHbmPs(const HbmOptions& options, std::unique_ptr<HbmPs>* out) {
  const int visible = CudaDeviceCount();
  if (visible == 0) {
    return Status::DeviceError("--device cuda: no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)");
  }
  if (options.workers < 1 || options.workers > 255) {
    return Status::DeviceError("--workers-per-rank " + std::to_string(options.workers) +
                               ": the CUDA backend takes 1 to 255 workers a rank");
  }
  const bool listed = static_cast<int>(options.devices.size()) == options.workers;
  if (!listed && (!options.devices.empty() || options.workers > visible)) {
    return Status::DeviceError("--workers-per-rank " + std::to_string(options.workers) + " with the CUDA backend needs " +
                               "that many GPUs per rank, or a device for each worker; " + std::to_string(visible) +
                               " visible");
  }
  for (int d : options.devices) {
    if (d < 0 || d >= visible) {
      return Status::DeviceError("CUDA device " + std::to_string(d) + " is not visible (" + std::to_string(visible) +
                                 " visible)");
    }
  }
  auto ps = std::make_unique<gpu::CudaHbmPs>(options);
  STRATA_RETURN_IF_ERROR(ps->Init());
  *out = std::move(ps);
  return Status::OK();
}

}  // namespace strata
