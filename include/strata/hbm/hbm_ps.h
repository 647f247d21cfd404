// HBM-PS: a rank's working parameters for one pass, on its G devices, and the per-worker
// compute that reads them. Sparse rows of the pass's working set are split over the G
// device shards by DeviceShard(key, G); dense MLP parameters and their optimizer state are
// replicated on every device. Two backends implement this interface: host (CPU threads,
// OpenBLAS; src/hbm) and CUDA (hash tables in HBM, cuBLAS; cuda/).
//
// Two table sets: the active one holds the pass in training, the standby one the next
// pass, staged in while the active one trains (BeginStage, Stage); SwapIn makes the staged
// pass active in O(1). A pass: per global step ComputeGradients for every local worker,
// then ApplySparse / ApplyDense with the job-wide sums, and at pass end Export. BeginPass
// and Insert fill the active set directly (evaluation, tests). Every rank applies the same
// sums to its replicas, so replicas of a row or of the dense parameters are bitwise
// identical on every rank after every step.
//
// Thread safety: ComputeGradients and Predict may run concurrently for different workers.
// BeginStage and Stage (the standby set) may run on one other thread concurrently with any
// call but SwapIn. Every other call requires that no other call is in progress.
#pragma once

#include <algorithm>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/common/status.h"
#include "strata/data/batch.h"
#include "strata/model/gemm.h"
#include "strata/model/model_spec.h"

namespace strata {

class ByteAllToAll;  // strata/comm/byte_all_to_all.h
class Comm;          // strata/comm/comm.h

// One worker's gradients for one mini-batch.
struct WorkerGrads {
  std::vector<uint64_t> keys;    // (k) distinct keys touched by the batch, first-seen order
  std::vector<float> grads;      // (k, dim) gradient of the scaled loss per key
  std::vector<uint32_t> counts;  // (k) occurrences of each key in the batch
  std::vector<float> dense;      // (num_dense_params) gradient of the dense parameters
  double loss_sum = 0;           // sum of per-example logloss (unscaled)
  int examples = 0;

  // The gradients of an empty batch (a worker whose chunk ran out before the pass did).
  void SetEmpty(size_t num_dense_params) {
    keys.clear();
    grads.clear();
    counts.clear();
    dense.assign(num_dense_params, 0.0f);
    loss_sum = 0;
    examples = 0;
  }
};

// The dense model: MLP parameters (Mlp layout) and the dense optimizer's state.
struct DenseState {
  std::vector<float> params;
  int64_t steps = 0;
  std::vector<float> m, v;  // Adam moments (empty for SGD)
};

class HbmPs {
 public:
  virtual ~HbmPs() = default;

  virtual int num_workers() const = 0;
  virtual size_t num_dense_params() const = 0;
  virtual std::string name() const = 0;  // "host" or "cuda"

  // Empties the active set and sizes its shards for expected_keys keys of `pass`.
  virtual Status BeginPass(int pass, size_t expected_keys) = 0;

  // Inserts (or overwrites) rows in the active set. keys: (n) distinct ; rows: (n,
  // RowLayout bytes), host memory.
  virtual Status Insert(const uint64_t* keys, size_t n, const uint8_t* rows) = 0;

  // Stage-in: empties the standby set and sizes it for expected_keys keys of `pass`.
  virtual Status BeginStage(int pass, size_t expected_keys) = 0;

  // Before a pass's rows arrive: makes the standby set's room for about expected_keys
  // keys, so that BeginStage and Stage only fill it (the host backend writes its new pages
  // here, while the pass is pulled, rather than as rows go in). A hint: without it staging
  // costs the same time later. Called by the thread that stages, while it owns the standby
  // set, and for a job's first pass as the pipeline starts (PassPipeline::StartTraining).
  virtual void ReserveStage(size_t expected_keys) { (void)expected_keys; }

  // Inserts (or overwrites) rows in the standby set; arguments as Insert.
  virtual Status Stage(const uint64_t* keys, size_t n, const uint8_t* rows) = 0;

  // Overwrites the standby set's rows of keys (n, all staged) with their rows in the active
  // set (all present), as Export and then Stage would (PassRefresh's rows this rank trained
  // last pass); by default through a host buffer of rows of row_bytes.
  virtual Status StageFromActive(const uint64_t* keys, size_t n, size_t row_bytes) {
    std::vector<uint8_t> rows(n * row_bytes);
    STRATA_RETURN_IF_ERROR(Export(keys, n, rows.data()));
    return Stage(keys, n, rows.data());
  }

  // The staged pass becomes active and the active set becomes standby, in O(1).
  virtual Status SwapIn() = 0;

  // Copies the current rows of keys (all present) into rows: (n, row bytes), host memory.
  virtual Status Export(const uint64_t* keys, size_t n, uint8_t* rows) = 0;

  // Forward + backward of worker's batch. Every key of the batch must have been inserted.
  // The loss is scaled by grad_scale before differentiation (1 / global batch size).
  virtual Status ComputeGradients(int worker, const Batch& batch, float grad_scale,
                                  WorkerGrads* out) = 0;

  // Click probabilities of worker's batch: probs (batch.num_examples), host memory.
  virtual Status Predict(int worker, const Batch& batch, float* probs) = 0;

  // Applies the sparse optimizer to the rows of keys (all present) with the job-wide summed
  // gradients grads: (n, dim), adds counts to their freq and stamps the pass.
  virtual Status ApplySparse(const uint64_t* keys, size_t n, const float* grads,
                             const uint32_t* counts) = 0;

  // Applies the dense optimizer to every replica with the job-wide summed gradient.
  virtual Status ApplyDense(const float* grad) = 0;

  // The whole step of a job of one worker, whose gradients are the job-wide sums:
  // ComputeGradients(0, ...), then ApplySparse and ApplyDense with its gradients. out gets
  // the examples and loss; its gradients are unspecified (a backend may keep them where
  // they were computed). The rows and dense state are those of the three calls, bitwise.
  // next: the batch the next call will train (the same object, unchanged until then), or
  // null; a backend may prepare it during this step. Results do not depend on it.
  virtual Status TrainAlone(const Batch& batch, const Batch* /*next*/, float grad_scale, WorkerGrads* out) {
    STRATA_RETURN_IF_ERROR(ComputeGradients(0, batch, grad_scale, out));
    STRATA_RETURN_IF_ERROR(ApplySparse(out->keys.data(), out->keys.size(), out->grads.data(), out->counts.data()));
    return ApplyDense(out->dense.data());
  }
  // The multiplier of both base learning rates (LrSchedule::Factor of the step) for the
  // ApplySparse and ApplyDense calls that follow; 1 until set.
  virtual void SetRateFactor(double factor) = 0;

  // A step's sums over the devices (the CUDA backend, over NCCL). ConnectDevices, a
  // collective over comm's ranks (the job's), connects this rank's devices to the other
  // ranks'; every rank returns the same status. From then on ComputeGradients leaves
  // WorkerGrads::dense empty and keeps each worker's dense gradient on its device, and
  // SumAndApplyDense, a collective over the same ranks, sums them job-wide, bitwise as
  // DenseReducer does (in global worker order), and applies the sum to every replica;
  // step_transport carries ParamExchange's step records between the ranks (it belongs to
  // the backend; used by one thread at a time, not beside SumAndApplyDense).
  // The host backend has no devices to connect (InvalidArgument).
  virtual Status ConnectDevices(Comm* /*comm*/) { return NoDevices(); }
  virtual bool sums_dense_on_devices() const { return false; }
  virtual Status SumAndApplyDense() { return NoDevices(); }
  virtual ByteAllToAll* step_transport() { return nullptr; }
  // Bytes this rank sent other ranks over the devices' communicator (both kinds of sums).
  virtual uint64_t device_bytes_sent() const { return 0; }

  // Dense parameters and their optimizer state, for checkpoints and checks.
  virtual Status GetDenseState(DenseState* state) const = 0;
  virtual Status SetDenseState(const DenseState& state) = 0;

  // Host memory the backend holds between calls to stage rows (0 for the host backend).
  virtual size_t host_staging_bytes() const { return 0; }

 private:
  Status NoDevices() const {
    return Status::InvalidArgument(name() + " backend: dense gradients cannot be summed on its devices");
  }
};

// Keys one of `shards` device tables must hold for a pass of expected_keys keys split by
// DeviceShard: an even share plus slack for hash imbalance (about 6 sigma). Both backends
// size their tables with it.
inline size_t ShardCapacity(size_t expected_keys, size_t shards) {
  if (shards == 1) return expected_keys;
  const size_t share = expected_keys / shards;
  return share + 64 + 6 * static_cast<size_t>(std::sqrt(static_cast<double>(share) + 1));
}

struct HbmOptions {
  ModelSpec spec;
  int workers = 1;       // G: devices (CUDA) or virtual devices (host) of this rank
  // CUDA backend: the device of each worker (G entries; may repeat: workers then share a
  // GPU); empty means devices 0..G-1. CudaDevicesFor chooses them.
  std::vector<int> devices;
  int threads = 1;       // host backend: CPU threads shared by the workers
  int max_batch = 4096;  // largest batch ComputeGradients/Predict will see
  // Host backend: the MLP's products in ComputeGradients (Predict is always fp32).
  // kBf16 REQUIRES OnednnGemm::Bf16Supported().
  DensePrecision dense_precision = DensePrecision::kFp32;

  // Host backend: the threads of each worker's products (an OpenMP team). Concurrent
  // workers each take a core; a lone worker's products use them all.
  int gemm_threads() const { return workers >= threads ? 1 : std::max(1, threads / workers); }
};

// Host backend: real CPU training, multi-threaded. Always available.
std::unique_ptr<HbmPs> NewHostHbmPs(const HbmOptions& options);

// CUDA backend; fails with a DeviceError when built without CUDA or when no GPU is visible.
Status NewCudaHbmPs(const HbmOptions& options, std::unique_ptr<HbmPs>* out);

// The backend `inner` (built for f32 rows) for tiers whose rows have stored.dtype: rows are
// widened to f32 as they enter it and rounded to nearest even as they leave (Export).
// Returns inner itself for f32 rows.
std::unique_ptr<HbmPs> WithRowDtype(std::unique_ptr<HbmPs> inner, const RowLayout& stored);

// Number of visible CUDA devices (0 in a build without CUDA).
int CudaDeviceCount();

// The least free memory (cudaMemGetInfo) among `devices` (the ones a rank's workers use);
// 0 in a build without CUDA or when one is not visible.
int64_t CudaMinFreeBytes(const std::vector<int>& devices);

// The device's name ("NVIDIA H100 80GB HBM3"), or "unknown".
std::string CudaDeviceName(int device);

}  // namespace strata
