// StepLoop: compute, reduce and apply, step by step.
#include "train/step_loop.h"

#include <stdexcept>
#include <string>

#include "strata/common/fault_point.h"

namespace strata {
StepLoop::StepLoop(Comm* comm, ParamExchange* exchange, HbmPs* hbm, ThreadPool* pool, int workers, int batch_size,
                   int num_slots, int num_dense, const LrSchedule& schedule)
    : comm_(comm), exchange_(exchange), hbm_(hbm), pool_(pool),
      scale_(1.0f / static_cast<float>(static_cast<int64_t>(workers) * batch_size)), schedule_(schedule),
      dense_(comm, hbm->num_dense_params()), grads_(hbm->num_workers()), status_(hbm->num_workers()),
      dense_sum_(hbm->num_dense_params()), alone_(workers == 1) {
  empty_.Clear(num_slots, num_dense);
}

Status StepLoop::Run(const PassData& pass, int64_t first_step, int64_t* examples, double* loss_sum) {
  for (int64_t step = 0; step < pass.steps; ++step) {
    hbm_->SetRateFactor(schedule_.Factor(first_step + step));
    if (alone_) {
      STRATA_RETURN_IF_ERROR(TrainAlone(pass, step, examples, loss_sum));
      continue;
    }
    STRATA_RETURN_IF_ERROR(ComputeAll(pass, step));
    STRATA_RETURN_IF_ERROR(Apply(pass.routing, examples, loss_sum));
  }
  return Status::OK();
}

Status StepLoop::TrainAlone(const PassData& pass, int64_t step, int64_t* examples, double* loss_sum) {
  const std::vector<Batch>& mine = pass.batches[0];
  const Batch& b = step < static_cast<int64_t>(mine.size()) ? mine[step] : empty_;
  const Batch* next = step + 1 < static_cast<int64_t>(mine.size()) ? &mine[step + 1] : nullptr;
  Status st = hbm_->TrainAlone(b, next, scale_, &grads_[0]);
  if (st.ok()) st = InjectedFailure("train", comm_->rank());
  *examples += grads_[0].examples;
  *loss_sum += grads_[0].loss_sum;
  return st;
}

Status StepLoop::ComputeAll(const PassData& pass, int64_t step) {
  pool_->ParallelFor(grads_.size(), [&](size_t g) {
    const std::vector<Batch>& mine = pass.batches[g];
    const Batch& b = step < static_cast<int64_t>(mine.size()) ? mine[step] : empty_;
    status_[g] = hbm_->ComputeGradients(static_cast<int>(g), b, scale_, &grads_[g]);
  });
  Status st = FirstError(status_);
  if (st.ok()) st = InjectedFailure("train", comm_->rank());
  return comm_->AgreeOn(st);
}

Status StepLoop::Apply(const PassRouting& routing, int64_t* examples, double* loss_sum) {
  std::vector<SparseGradView> views;
  std::vector<const float*> dense_views;
  for (const WorkerGrads& w : grads_) {
    views.push_back({w.keys.data(), w.grads.data(), w.counts.data(), w.keys.size()});
    dense_views.push_back(w.dense.data());
    *examples += w.examples;
    *loss_sum += w.loss_sum;
  }
  const Status sparse = exchange_->ReduceGradients(routing, views, &keys_, &sparse_sum_, &counts_);
  if (!sparse.ok() && hbm_->step_transport() != nullptr) EndRank("sparse gradient exchange over the devices", sparse);
  STRATA_RETURN_IF_ERROR(sparse);
  const bool on_devices = hbm_->sums_dense_on_devices();
  if (on_devices) {
    SumDenseOnDevices();
  } else {
    STRATA_RETURN_IF_ERROR(dense_.Reduce(dense_views, dense_sum_.data()));
  }
  Status local = hbm_->ApplySparse(keys_.data(), keys_.size(), sparse_sum_.data(), counts_.data());
  if (local.ok() && !on_devices) local = hbm_->ApplyDense(dense_sum_.data());
  return comm_->AgreeOn(local);
}

void StepLoop::SumDenseOnDevices() {
  device_lower_bound_ += DenseReducer::StepLowerBound(comm_->size(), hbm_->num_dense_params());
  Status st = hbm_->SumAndApplyDense();
  if (st.ok()) st = InjectedFailure("dense-sum", comm_->rank());
  if (!st.ok()) EndRank("dense gradient sum on the devices", st);
}

// The devices' collectives are out of AgreeOn's reach: a rank whose part failed may leave
// the others waiting in them for good. The error ends this rank at once (fatal_error.h),
// and mpirun or srun then ends the others.
void StepLoop::EndRank(const char* what, const Status& error) {
  throw std::runtime_error(std::string(what) + ": " + error.ToString());
}

}  // namespace strata
