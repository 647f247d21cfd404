// WithRowDtype: an HbmPs that computes on f32 rows for tiers that store 16-bit rows.
// Rows are widened as they enter (Insert, Stage) and rounded to nearest even as they leave
// (Export), so every replica of a row that leaves, whether pushed home or copied by a pass
// refresh (StageFromActive keeps HbmPs's default: Export, then Stage), is the same bytes
// its owner stores. Thread safety: that of the wrapped HbmPs;
// the conversion buffer is per call.
#include <vector>

#include "strata/hbm/hbm_ps.h"

namespace strata {
namespace {

class RowDtypeHbmPs : public HbmPs {
 public:
  RowDtypeHbmPs(std::unique_ptr<HbmPs> inner, const RowLayout& stored)
      : inner_(std::move(inner)), stored_(stored), compute_(stored.dim, stored.state_floats) {}

  int num_workers() const override { return inner_->num_workers(); }
  size_t num_dense_params() const override { return inner_->num_dense_params(); }
  std::string name() const override { return inner_->name(); }
  Status BeginPass(int pass, size_t expected_keys) override { return inner_->BeginPass(pass, expected_keys); }
  Status Insert(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return inner_->Insert(keys, n, Widen(rows, n));
  }
  Status BeginStage(int pass, size_t expected_keys) override { return inner_->BeginStage(pass, expected_keys); }
  void ReserveStage(size_t expected_keys) override { inner_->ReserveStage(expected_keys); }
  Status Stage(const uint64_t* keys, size_t n, const uint8_t* rows) override {
    return inner_->Stage(keys, n, Widen(rows, n));
  }
  Status SwapIn() override { return inner_->SwapIn(); }
  Status Export(const uint64_t* keys, size_t n, uint8_t* rows) override {
    std::vector<uint8_t> wide(n * compute_.bytes());
    STRATA_RETURN_IF_ERROR(inner_->Export(keys, n, wide.data()));
    ConvertRows(compute_, wide.data(), n, stored_, rows);
    return Status::OK();
  }
  Status ComputeGradients(int worker, const Batch& batch, float grad_scale, WorkerGrads* out) override {
    return inner_->ComputeGradients(worker, batch, grad_scale, out);
  }
  Status Predict(int worker, const Batch& batch, float* probs) override { return inner_->Predict(worker, batch, probs); }
  Status ApplySparse(const uint64_t* keys, size_t n, const float* grads, const uint32_t* counts) override {
    return inner_->ApplySparse(keys, n, grads, counts);
  }
  Status ApplyDense(const float* grad) override { return inner_->ApplyDense(grad); }
  Status ConnectDevices(Comm* comm) override { return inner_->ConnectDevices(comm); }
  bool sums_dense_on_devices() const override { return inner_->sums_dense_on_devices(); }
  Status SumAndApplyDense() override { return inner_->SumAndApplyDense(); }
  ByteAllToAll* step_transport() override { return inner_->step_transport(); }
  uint64_t device_bytes_sent() const override { return inner_->device_bytes_sent(); }
  void SetRateFactor(double factor) override { inner_->SetRateFactor(factor); }
  Status GetDenseState(DenseState* state) const override { return inner_->GetDenseState(state); }
  Status SetDenseState(const DenseState& state) override { return inner_->SetDenseState(state); }

 private:
  // The rows (n, stored bytes) as f32 rows, in a buffer valid until the next call.
  const uint8_t* Widen(const uint8_t* rows, size_t n) {
    wide_.resize(n * compute_.bytes());
    ConvertRows(stored_, rows, n, compute_, wide_.data());
    return wide_.data();
  }

  std::unique_ptr<HbmPs> inner_;
  const RowLayout stored_, compute_;
  std::vector<uint8_t> wide_;  // Insert's and Stage's conversion buffer
};

}  // namespace

std::unique_ptr<HbmPs> WithRowDtype(std::unique_ptr<HbmPs> inner, const RowLayout& stored) {
  if (stored.dtype == RowDtype::kFp32) return inner;
  return std::make_unique<RowDtypeHbmPs>(std::move(inner), stored);
}

}  // namespace strata
