// CUDA HBM-PS backend: G workers, worker g on device HbmOptions::devices[g] (chosen by
// CudaDevicesFor: by local rank, or as --cuda-devices lists them; several workers may share
// a device, each with its own tables, streams and cuBLAS handle). The pass's rows are split
// over the G workers' hash tables by DeviceShard(key, G); a worker resolves its batch's keys
// in every shard, through peer access where a shard is on another GPU (enabled between all
// the devices; required when they differ), and gathers the rows it needs once per distinct
// key. The dense model is DenseModel's (strata/model/dense_model.h: dnn, deepfm, dcn, wdl,
// dlrm) in its parameter layout, run on each worker by GpuDenseModel (gpu_dense_model.cuh).
// Dense parameters and Adam moments are replicated on every GPU and
// updated by the same kernel from the same summed gradient, so replicas stay identical.
// Gradient sums across workers and ranks are the trainer's (it owns the exchange); this
// backend returns each worker's gradients in host memory like the host backend does, except
// in a job of one worker (TrainAlone), where they never leave the GPU, and the dense
// gradients once ConnectDevices has made the job's NCCL communicator: they stay on the GPUs
// and SumAndApplyDense sums them there (NcclDenseSum), while the step's sparse records
// travel between ranks over NCCL too (step_transport, NcclAllToAll).
//
// Every copy goes through page-locked memory: a call's uploads and downloads are queued
// together and waited for once (a training step waits twice: for the batch index's size
// and for its results). Bulk calls move their rows in bounded pinned chunks (BulkStaging).
//
// Each GPU holds its shard of two table sets: the active one trains, the standby one is
// staged by the Stage-in thread on its own stream with its own upload buffers; SwapIn flips
// an index. Every public call returns after its device work has finished, but ApplyDense,
// whose kernels the next call's synchronization waits for. Thread safety as
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

#include "bulk_staging.cuh"
#include "cuda_check.cuh"
#include "cuda_worker.cuh"
#include "gpu_dense_model.cuh"
#include "nccl_all_to_all.cuh"
#include "nccl_comm.cuh"
#include "nccl_dense_sum.cuh"
#include "optimizer_kernels.cuh"
#include "pinned_transfer.cuh"
#include "pool_kernels.cuh"
#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/dense_model.h"
#include "strata/model/mlp.h"
#include "strata/model/optimizer.h"
#include "strata/model/pooling.h"

namespace strata {
namespace gpu {
namespace {

class CudaHbmPs final : public HbmPs {
 public:
  explicit CudaHbmPs(const HbmOptions& o)
      : spec_(o.spec), mean_(MeanSlotFlags(o.spec)), layout_(RowLayoutOf(o.spec)), dense_(o.spec), mlp_(dense_.mlp()), max_batch_(o.max_batch),
        bulk_(o.workers), staging_(o.workers) {
    for (int g = 0; g < o.workers; ++g) {
      const int device = o.devices.empty() ? g : o.devices[g];
      workers_.push_back(std::make_unique<Worker>(device, layout_.bytes(), mlp_));
    }
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
    std::vector<float> params(dense_.num_params());
    dense_.InitParams(spec_.seed, params.data());
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
      if (dense_.bottom()) {
        w->bottom = std::make_unique<CublasMlp>(*dense_.bottom());
        STRATA_RETURN_IF_ERROR(w->bottom->Init(max_batch_, w->stream));
      }
      if (dense_.cross()) {
        w->cross = std::make_unique<CublasCrossNet>(*dense_.cross());
        STRATA_RETURN_IF_ERROR(w->cross->Init(max_batch_, w->mlp.handle(), w->stream, w->mlp.ones()));
      }
      STRATA_RETURN_IF_ERROR(w->missing.Reserve(1));
      if (!mean_.empty()) STRATA_RETURN_IF_ERROR(Upload(mean_.data(), mean_.size(), w->stream, &w->mean));
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
  size_t num_dense_params() const override { return dense_.num_params(); }
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
    const size_t rb = layout_.bytes(), chunk = BulkStaging::ChunkRows(rb);
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    bulk_.Split(keys, n);
    for (size_t g = 0; g < workers_.size(); ++g) {
      Worker& w = *workers_[g];
      const std::vector<uint32_t>& part = bulk_.part(g);
      DeviceScope scope(w.device);
      for (size_t begin = 0; begin < part.size(); begin += chunk) {
        const size_t end = std::min(part.size(), begin + chunk), m = end - begin;
        STRATA_RETURN_IF_ERROR(bulk_.Prepare(m, rb));
        bulk_.Pack(keys, nullptr, rb, part, begin, end);
        STRATA_RETURN_IF_ERROR(Upload(bulk_.chunk_keys(), m, w.stream, &w.keys));
        STRATA_RETURN_IF_ERROR(w.staged.Reserve(m * rb));
        STRATA_RETURN_IF_ERROR(
            w.tables[active_].Export(w.keys.get(), m, reinterpret_cast<uint32_t*>(w.staged.get()), w.stream));
        STRATA_RETURN_IF_ERROR(Download(w.staged.get(), m * rb, w.stream, bulk_.chunk_items()));
        STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
        bulk_.Unpack(rows, rb, part, begin, end);
      }
    }
    bulk_.Release();
    return Status::OK();
  }

  Status ComputeGradients(int worker, const Batch& batch, float grad_scale, WorkerGrads* out) override {
    Worker& w = *workers_[worker];
    const int B = batch.num_examples, dim = spec_.row_dim();
    const size_t P = dense_.num_params();
    if (B == 0) return EmptyGradients(w, out);
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(Backward(w, batch, grad_scale));
    const size_t k = w.index.distinct();
    PinnedDownloads results;
    const size_t keys_at = results.Add(w.index.keys(), k), counts_at = results.Add(w.index.counts(), k);
    const size_t grads_at = results.Add(w.grads.get(), k * dim);
    const size_t dense_at = results.Add(w.dparams.get(), dense_sum_ ? 0 : P);
    double loss_sum = 0;
    STRATA_RETURN_IF_ERROR(FinishBatch(w, B, &results, &loss_sum));
    const PinnedBuffer& got = w.down;
    out->examples = B;
    out->loss_sum = loss_sum;
    out->keys.assign(got.At<uint64_t>(keys_at), got.At<uint64_t>(keys_at) + k);
    out->counts.assign(got.At<uint32_t>(counts_at), got.At<uint32_t>(counts_at) + k);
    out->grads.assign(got.At<float>(grads_at), got.At<float>(grads_at) + k * dim);
    out->dense.assign(got.At<float>(dense_at), got.At<float>(dense_at) + (dense_sum_ ? 0 : P));
    return Status::OK();
  }

  Status ConnectDevices(Comm* comm) override {
    STRATA_RETURN_IF_ERROR(NcclComm::Connect(comm, workers_.front()->device, &nccl_));
    auto sum = std::make_unique<NcclDenseSum>(nccl_.get(), dense_.num_params(), num_workers());
    auto transport = std::make_unique<NcclAllToAll>(nccl_.get());
    Status local = sum->Init();
    if (local.ok()) local = transport->Init();
    STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
    dense_sum_ = std::move(sum);
    step_transport_ = std::move(transport);
    return Status::OK();
  }

  ByteAllToAll* step_transport() override { return step_transport_.get(); }
  uint64_t device_bytes_sent() const override { return nccl_ ? nccl_->bytes_sent() : 0; }

  bool sums_dense_on_devices() const override { return dense_sum_ != nullptr; }

  // The sum lands on the first worker's GPU; a replica on another GPU steps from a copy.
  Status SumAndApplyDense() override {
    if (!dense_sum_) return HbmPs::SumAndApplyDense();
    const size_t P = dense_.num_params();
    std::vector<const float*> grads;
    std::vector<int> devices;
    for (const auto& w : workers_) {
      grads.push_back(w->dparams.get());
      devices.push_back(w->device);
    }
    STRATA_RETURN_IF_ERROR(dense_sum_->Sum(grads, devices, workers_.front()->stream));
    const AdamStepScalars k = NextDenseStep();
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      const float* sum = dense_sum_->sum();
      if (w->device != nccl_->device()) {
        STRATA_RETURN_IF_ERROR(w->grad.Reserve(P));
        STRATA_CUDA_TRY(cudaMemcpyPeerAsync(w->grad.get(), w->device, sum, nccl_->device(), P * sizeof(float),
                                            w->stream));
        sum = w->grad.get();
      }
      STRATA_RETURN_IF_ERROR(DenseStep(*w, sum, k));
    }
    return Status::OK();
  }

  // One worker's gradients are the sums: the step is applied where they were computed,
  // with the same kernels ApplySparse and ApplyDense run, so the rows are those of the
  // longer way bitwise.
  Status TrainAlone(const Batch& batch, const Batch* /*next*/, float grad_scale, WorkerGrads* out) override {
    if (num_workers() != 1 || batch.num_examples == 0) return HbmPs::TrainAlone(batch, nullptr, grad_scale, out);
    Worker& w = *workers_.front();
    const int B = batch.num_examples;
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(Backward(w, batch, grad_scale));
    STRATA_RETURN_IF_ERROR(LaunchSparseApply(w.rows.get(), w.grads.get(), w.index.counts(), w.index.distinct(), spec_,
                                             lr_sparse_, static_cast<uint32_t>(set_pass_[active_]), w.stream));
    STRATA_RETURN_IF_ERROR(DenseStep(w, w.dparams.get(), NextDenseStep()));
    PinnedDownloads results;
    double loss_sum = 0;
    STRATA_RETURN_IF_ERROR(FinishBatch(w, B, &results, &loss_sum));
    out->SetEmpty(0);
    out->examples = B;
    out->loss_sum = loss_sum;
    return Status::OK();
  }

  Status Predict(int worker, const Batch& batch, float* probs) override {
    Worker& w = *workers_[worker];
    const int B = batch.num_examples;
    if (B == 0) return Status::OK();
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(Forward(w, batch, false));
    PinnedDownloads results;
    const size_t logits_at = results.Add(w.logits.get(), B);
    STRATA_RETURN_IF_ERROR(FinishBatch(w, 0, &results, nullptr));
    const float* logits = w.down.At<float>(logits_at);
    for (int i = 0; i < B; ++i) probs[i] = 1.0f / (1.0f + std::exp(-logits[i]));  // as the host backend
    return Status::OK();
  }

  void SetRateFactor(double factor) override {
    lr_sparse_ = static_cast<float>(spec_.lr_sparse * factor);
    lr_dense_ = static_cast<float>(spec_.lr_dense * factor);
  }

  // Queues every shard's update, then waits for all of them at once.
  Status ApplySparse(const uint64_t* keys, size_t n, const float* grads, const uint32_t* counts) override {
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    const int G = num_workers();
    if (G > 1) bulk_.Split(keys, n);
    std::vector<size_t> missing_at(G);
    for (int g = 0; g < G; ++g) {
      Worker& w = *workers_[g];
      DeviceScope scope(w.device);
      const size_t m = G == 1 ? n : bulk_.part(g).size();
      if (m == 0) continue;
      STRATA_RETURN_IF_ERROR(G == 1 ? UploadUpdates(w, keys, grads, counts, n) : UploadShardUpdates(w, g, keys, grads, counts));
      STRATA_RETURN_IF_ERROR(w.rows.Reserve(m));
      STRATA_CUDA_TRY(cudaMemsetAsync(w.missing.get(), 0xff, sizeof(uint32_t), w.stream));
      // views + g with no shard list: every key is looked up in this GPU's own shard.
      STRATA_RETURN_IF_ERROR(
          ResolveRows(w.views[active_].get() + g, nullptr, w.keys.get(), m, w.rows.get(), w.missing.get(), w.stream));
      STRATA_RETURN_IF_ERROR(LaunchSparseApply(w.rows.get(), reinterpret_cast<const float*>(w.staged.get()),
                                               w.counts.get(), m, spec_, lr_sparse_,
                                               static_cast<uint32_t>(set_pass_[active_]), w.stream));
      PinnedDownloads result;
      missing_at[g] = result.Add(w.missing.get(), 1);
      STRATA_RETURN_IF_ERROR(result.Issue(&w.down, w.stream));
    }
    Status missing;
    for (int g = 0; g < G; ++g) {
      Worker& w = *workers_[g];
      const size_t m = G == 1 ? n : bulk_.part(g).size();
      if (m == 0) continue;
      DeviceScope scope(w.device);
      STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
      const uint32_t first_missing = *w.down.At<uint32_t>(missing_at[g]);
      if (first_missing != kNoRow && missing.ok()) {
        const uint64_t key = G == 1 ? keys[first_missing] : keys[bulk_.part(g)[first_missing]];
        missing = Status::NotFound("ApplySparse: key " + std::to_string(key) + " not in the HBM-PS");
      }
    }
    return missing;  // like the host backend: present rows are updated even when one is missing
  }

  // Queued on every replica; the next call's synchronization waits for it.
  Status ApplyDense(const float* grad) override {
    const size_t P = dense_.num_params();
    const AdamStepScalars k = NextDenseStep();
    STRATA_RETURN_IF_ERROR(SyncAll());  // the previous step's upload has left dense_up_
    STRATA_RETURN_IF_ERROR(dense_up_.Reserve(P * sizeof(float)));
    std::memcpy(dense_up_.At<float>(0), grad, P * sizeof(float));
    for (auto& w : workers_) {
      DeviceScope scope(w->device);
      STRATA_RETURN_IF_ERROR(Upload(dense_up_.At<float>(0), P, w->stream, &w->grad));
      STRATA_RETURN_IF_ERROR(DenseStep(*w, w->grad.get(), k));
    }
    return Status::OK();
  }

  Status GetDenseState(DenseState* state) const override {
    const Worker& w = *workers_.front();
    const size_t P = dense_.num_params();
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
    const size_t P = dense_.num_params();
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

  // Inserts (or overwrites) rows into table set `set`, each in its key's shard, a pinned
  // chunk at a time (the table's Insert waits for each).
  Status InsertInto(int set, const uint64_t* keys, size_t n, const uint8_t* rows, bool staging) {
    const size_t rb = layout_.bytes(), chunk = BulkStaging::ChunkRows(rb);
    BulkStaging& host = staging ? staging_ : bulk_;
    host.Split(keys, n);
    for (size_t g = 0; g < workers_.size(); ++g) {
      Worker& w = *workers_[g];
      const std::vector<uint32_t>& part = host.part(g);
      DeviceScope scope(w.device);
      const cudaStream_t stream = StreamOf(w, staging);
      DeviceBuffer<uint64_t>& dkeys = staging ? w.stage.keys : w.keys;
      DeviceBuffer<uint8_t>& drows = staging ? w.stage.rows : w.staged;
      for (size_t begin = 0; begin < part.size(); begin += chunk) {
        const size_t end = std::min(part.size(), begin + chunk), m = end - begin;
        STRATA_RETURN_IF_ERROR(host.Prepare(m, rb));
        host.Pack(keys, rows, rb, part, begin, end);
        STRATA_RETURN_IF_ERROR(Upload(host.chunk_keys(), m, stream, &dkeys));
        STRATA_RETURN_IF_ERROR(Upload(host.chunk_items(), m * rb, stream, &drows));
        const Status st = w.tables[set].Insert(dkeys.get(), m, reinterpret_cast<const uint32_t*>(drows.get()), stream);
        if (!st.ok()) {
          return Status::WithCode(st.code(), st.message() + " (keys " + std::to_string(begin) + " to " +
                                                 std::to_string(end) + " of the " + std::to_string(part.size()) +
                                                 " bound for device shard " + std::to_string(g) + ")");
        }
      }
    }
    host.Release();
    return Status::OK();
  }

  static cudaStream_t StreamOf(const Worker& w, bool staging) { return staging ? w.stage.stream : w.stream; }

  // ApplySparse's inputs of a one-shard rank, as given, into w.keys, w.staged and w.counts.
  Status UploadUpdates(Worker& w, const uint64_t* keys, const float* grads, const uint32_t* counts, size_t n) {
    PinnedUploads up;
    STRATA_RETURN_IF_ERROR(up.Add(keys, n, &w.keys));
    STRATA_RETURN_IF_ERROR(up.Add(reinterpret_cast<const uint8_t*>(grads), n * spec_.row_dim() * sizeof(float),
                                  &w.staged));
    STRATA_RETURN_IF_ERROR(up.Add(counts, n, &w.counts));
    return up.Issue(&w.up, w.stream);
  }

  // The same for shard g's part of them (bulk_.part(g)), gathered first.
  Status UploadShardUpdates(Worker& w, int g, const uint64_t* keys, const float* grads, const uint32_t* counts) {
    const std::vector<uint32_t>& part = bulk_.part(g);
    const size_t dim = spec_.row_dim();
    part_keys_.resize(part.size());
    part_grads_.resize(part.size() * dim);
    part_counts_.resize(part.size());
    for (size_t i = 0; i < part.size(); ++i) {
      part_keys_[i] = keys[part[i]];
      std::memcpy(&part_grads_[i * dim], grads + part[i] * dim, dim * sizeof(float));
      part_counts_[i] = counts[part[i]];
    }
    return UploadUpdates(w, part_keys_.data(), part_grads_.data(), part_counts_.data(), part.size());
  }

  // The gradients of an empty batch. With the dense sum on the devices, the worker's dense
  // gradient there is zeroed, and its stream waited for: the sum reads it from another.
  Status EmptyGradients(Worker& w, WorkerGrads* out) {
    const size_t P = dense_.num_params();
    out->SetEmpty(dense_sum_ ? 0 : P);
    if (!dense_sum_) return Status::OK();
    DeviceScope scope(w.device);
    STRATA_RETURN_IF_ERROR(w.dparams.Reserve(P));
    STRATA_CUDA_TRY(cudaMemsetAsync(w.dparams.get(), 0, P * sizeof(float), w.stream));
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    return Status::OK();
  }

  // The dense step's scalars, counting the step.
  AdamStepScalars NextDenseStep() {
    ++steps_;
    return MakeAdamStepScalars(lr_dense_, DenseOptimizer::kAdamBeta1, DenseOptimizer::kAdamBeta2,
                               DenseOptimizer::kAdamEps, steps_);
  }

  // Queues the dense optimizer's step on w's replica from grad (device).
  Status DenseStep(Worker& w, const float* grad, const AdamStepScalars& k) {
    const size_t P = dense_.num_params();
    if (spec_.dense_optimizer == DenseOptimizerKind::kAdam) {
      return LaunchAdamStep(w.params.get(), w.m.get(), w.v.get(), grad, P, k, w.stream);
    }
    return LaunchSgdStep(w.params.get(), grad, P, lr_dense_, w.stream);
  }

  // Uploads a batch's inputs (and labels when training) through w.up.
  Status UploadBatch(Worker& w, const Batch& batch, bool labels) {
    const int G = num_workers();
    const size_t n = batch.keys.size();
    PinnedUploads up;
    STRATA_RETURN_IF_ERROR(up.Add(batch.keys.data(), n, &w.keys));
    STRATA_RETURN_IF_ERROR(up.Add(batch.offsets.data(), batch.offsets.size(), &w.offsets));
    STRATA_RETURN_IF_ERROR(up.Add(batch.dense.data(), batch.dense.size(), &w.dense));
    if (labels) STRATA_RETURN_IF_ERROR(up.Add(batch.labels.data(), batch.labels.size(), &w.labels));
    if (G > 1) {
      w.host_shard.resize(n);
      for (size_t j = 0; j < n; ++j) w.host_shard[j] = static_cast<uint8_t>(DeviceShard(batch.keys[j], G));
      STRATA_RETURN_IF_ERROR(up.Add(w.host_shard.data(), n, &w.shard));
    }
    return up.Issue(&w.up, w.stream);
  }

  // Uploads the batch, builds its index, resolves and gathers its rows from every shard,
  // pools them into the MLP input and runs the forward pass into w.logits. The lookup's
  // outcome is checked by FinishBatch.
  Status Forward(Worker& w, const Batch& batch, bool labels) {
    const int B = batch.num_examples, S = batch.num_slots, rd = spec_.row_dim(), G = num_workers();
    const int in = dense_.input_width();
    if (B > max_batch_) {
      return Status::InvalidArgument("batch of " + std::to_string(B) + " examples exceeds the HBM-PS max_batch " +
                                     std::to_string(max_batch_));
    }
    STRATA_RETURN_IF_ERROR(CheckActiveSet());
    STRATA_RETURN_IF_ERROR(UploadBatch(w, batch, labels));
    STRATA_RETURN_IF_ERROR(w.index.Build(w.keys.get(), batch.keys.size(), w.offsets.get(), B, S, rd, in,
                                         G > 1 ? w.shard.get() : nullptr, w.stream));
    const size_t k = w.index.distinct();
    STRATA_RETURN_IF_ERROR(w.rows.Reserve(k));
    STRATA_RETURN_IF_ERROR(w.emb.Reserve(k * rd));
    STRATA_CUDA_TRY(cudaMemsetAsync(w.missing.get(), 0xff, sizeof(uint32_t), w.stream));
    STRATA_RETURN_IF_ERROR(ResolveRows(w.views[active_].get(), G > 1 ? w.index.shards() : nullptr, w.index.keys(), k,
                                       w.rows.get(), w.missing.get(), w.stream));
    STRATA_RETURN_IF_ERROR(CopyRowsOut(w.rows.get(), k, rd, reinterpret_cast<uint32_t*>(w.emb.get()), w.stream));
    STRATA_RETURN_IF_ERROR(w.input.Reserve(static_cast<size_t>(B) * in));
    STRATA_RETURN_IF_ERROR(LaunchPool(w.offsets.get(), w.index.local_ids(), w.emb.get(), w.dense.get(), B, S, rd,
                                      batch.num_dense, w.input.get(), w.stream));
    if (!mean_.empty()) {
      STRATA_RETURN_IF_ERROR(LaunchScaleMeanSlots(w.offsets.get(), w.mean.get(), B, S, rd, in, w.input.get(), w.stream));
    }
    return model_.Forward(w, B, S);
  }

  // Forward, the loss of each example into w.losses and backward: the dense gradient into
  // w.dparams and one gradient per distinct key into w.grads (k, row_dim).
  Status Backward(Worker& w, const Batch& batch, float grad_scale) {
    const int B = batch.num_examples, rd = spec_.row_dim();
    STRATA_RETURN_IF_ERROR(Forward(w, batch, true));
    STRATA_RETURN_IF_ERROR(w.losses.Reserve(B));
    // dlogits overwrite the logits, as in the host backend.
    STRATA_RETURN_IF_ERROR(LaunchLogLoss(w.logits.get(), w.labels.get(), B, grad_scale, w.logits.get(),
                                         w.losses.get(), w.stream));
    STRATA_RETURN_IF_ERROR(w.dparams.Reserve(dense_.num_params()));
    STRATA_RETURN_IF_ERROR(w.dinput.Reserve(static_cast<size_t>(B) * dense_.input_width()));
    STRATA_RETURN_IF_ERROR(model_.Backward(w, B, batch.num_slots));
    const size_t k = w.index.distinct();
    STRATA_RETURN_IF_ERROR(w.grads.Reserve(k * rd));
    if (!mean_.empty()) {
      STRATA_RETURN_IF_ERROR(LaunchScaleMeanSlots(w.offsets.get(), w.mean.get(), B, batch.num_slots, rd,
                                                  dense_.input_width(), w.dinput.get(), w.stream));
    }
    return LaunchScatter(w.index.key_start(), w.index.counts(), w.index.sorted_base(), w.dinput.get(), k, rd,
                         w.grads.get(), w.stream);
  }

  // A batch is always the same pattern: the results to download (plus, when loss_sum is
  // given, the B losses, summed in row order as LossAndGrad sums), the lookup's outcome,
  // one wait. Reports a batch key missing from the HBM-PS.
  Status FinishBatch(Worker& w, int B, PinnedDownloads* results, double* loss_sum) {
    const size_t losses_at = results->Add(w.losses.get(), loss_sum != nullptr ? B : 0);
    const size_t missing_at = results->Add(w.missing.get(), 1);
    STRATA_RETURN_IF_ERROR(results->Issue(&w.down, w.stream));
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    if (loss_sum != nullptr) {
      const double* losses = w.down.At<double>(losses_at);
      for (int i = 0; i < B; ++i) *loss_sum += losses[i];
    }
    const uint32_t first_missing = *w.down.At<uint32_t>(missing_at);
    if (first_missing == kNoRow) return Status::OK();
    uint64_t key = 0;
    STRATA_RETURN_IF_ERROR(Download(w.index.keys() + first_missing, 1, w.stream, &key));
    STRATA_CUDA_TRY(cudaStreamSynchronize(w.stream));
    return Status::NotFound("key " + std::to_string(key) + " of the batch is not in the HBM-PS");
  }

  // A batch or step needs the active table set complete: not before the first pass, nor
  // after a BeginPass that failed part way (its views may name freed memory).
  Status CheckActiveSet() const {
    if (set_ready_[active_]) return Status::OK();
    return Status::InvalidArgument(!ever_ready_ ? "HBM-PS: a batch before the first pass"
                                                : "HBM-PS: the pass's device tables were not set up (its BeginPass failed)");
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
  DenseModel dense_;
  Mlp mlp_;  // dense_'s
  GpuDenseModel model_{spec_, dense_};
  int max_batch_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int64_t steps_ = 0;
  int active_ = 0;         // the table set in training; the other one is staged
  int set_pass_[2] = {};   // the pass each table set holds
  bool set_ready_[2] = {}; // each set's shards and views complete (ResetSet succeeded)
  bool ever_ready_ = false;
  // Host staging of the bulk calls (Insert, Export, ApplySparse's split), which never
  // overlap, and of the Stage-in thread's calls, which may overlap them.
  BulkStaging bulk_, staging_;
  PinnedBuffer dense_up_;  // ApplyDense's gradient, uploaded to every replica
  // Once ConnectDevices made them: the job's communicator and what runs on it.
  std::unique_ptr<NcclComm> nccl_;
  std::unique_ptr<NcclDenseSum> dense_sum_;
  std::unique_ptr<NcclAllToAll> step_transport_;
  std::vector<uint64_t> part_keys_;
  std::vector<float> part_grads_;
  std::vector<uint32_t> part_counts_;
};

}  // namespace
}  // namespace gpu

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
