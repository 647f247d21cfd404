// GpuDenseModel: the dense model's forward and backward on one worker (gpu_dense_model.cuh).
#include "gpu_dense_model.cuh"

#include "cuda_check.cuh"
#include "fm_kernels.cuh"

namespace strata::gpu {

// The cross layers or wdl's split before the MLP, and wdl's wide sum or deepfm's FM term after.
Status GpuDenseModel::Forward(Worker& w, int B, int S) const {
  const float* params = w.params.get();
  STRATA_RETURN_IF_ERROR(w.logits.Reserve(B));
  w.mlp_input = w.input.get();
  if (w.cross) STRATA_RETURN_IF_ERROR(w.cross->Forward(params + mlp().num_params(), w.input.get(), B, &w.mlp_input));
  if (spec_.kind == ModelKind::kWdl) {
    STRATA_RETURN_IF_ERROR(w.deep.Reserve(static_cast<size_t>(B) * mlp().input_width()));
    STRATA_RETURN_IF_ERROR(LaunchWdlSplit(w.input.get(), B, Wdl(), w.deep.get(), w.stream));
    w.mlp_input = w.deep.get();
  }
  if (spec_.kind == ModelKind::kDlrm) STRATA_RETURN_IF_ERROR(DlrmForward(w, B));
  STRATA_RETURN_IF_ERROR(w.mlp.Forward(params, w.mlp_input, B, w.logits.get()));
  if (spec_.kind == ModelKind::kWdl) return LaunchWdlAddWide(w.input.get(), B, Wdl(), w.logits.get(), w.stream);
  if (spec_.kind != ModelKind::kDeepFm) return Status::OK();
  return LaunchFmTerm(w.input.get(), B, dense_.input_width(), S, spec_.embedding_dim, w.logits.get(), w.stream);
}

Status GpuDenseModel::Backward(Worker& w, int B, int S) const {
  const float* params = w.params.get();
  const bool inner = w.mlp_input != w.input.get();  // cross layers, wdl's split or dlrm's interaction
  if (inner) STRATA_RETURN_IF_ERROR(w.dmlp_input.Reserve(static_cast<size_t>(B) * mlp().input_width()));
  float* dmlp = inner ? w.dmlp_input.get() : w.dinput.get();
  STRATA_RETURN_IF_ERROR(w.mlp.Backward(params, w.mlp_input, B, w.logits.get(), w.dparams.get(), dmlp));
  const size_t mp = mlp().num_params();
  if (w.cross) return w.cross->Backward(params + mp, w.input.get(), B, dmlp, w.dparams.get() + mp, w.dinput.get());
  if (spec_.kind == ModelKind::kWdl) return LaunchWdlMerge(dmlp, w.logits.get(), B, Wdl(), w.dinput.get(), w.stream);
  if (spec_.kind == ModelKind::kDlrm) return DlrmBackward(w, B, dmlp);
  if (spec_.kind != ModelKind::kDeepFm) return Status::OK();
  return LaunchFmGradient(w.input.get(), B, dense_.input_width(), S, spec_.embedding_dim, w.logits.get(),
                          w.dinput.get(), w.stream);
}

// DLRM below the MLP: the dense features through the bottom MLP into w.z, then the dot
// interaction into w.deep, the MLP's input.
Status GpuDenseModel::DlrmForward(Worker& w, int B) const {
  const float* z = nullptr;
  if (w.bottom) {
    const int nd = spec_.num_dense;
    STRATA_RETURN_IF_ERROR(w.dense_in.Reserve(static_cast<size_t>(B) * nd));
    STRATA_RETURN_IF_ERROR(w.z.Reserve(static_cast<size_t>(B) * spec_.embedding_dim));
    STRATA_RETURN_IF_ERROR(LaunchGatherDense(w.input.get(), B, dense_.input_width(), DenseColumn(), nd,
                                             w.dense_in.get(), w.stream));
    STRATA_RETURN_IF_ERROR(w.bottom->Forward(w.params.get() + mlp().num_params(), w.dense_in.get(), B, w.z.get()));
    z = w.z.get();
  }
  STRATA_RETURN_IF_ERROR(w.deep.Reserve(static_cast<size_t>(B) * mlp().input_width()));
  STRATA_RETURN_IF_ERROR(LaunchDotForward(w.input.get(), z, B, Dot(), w.deep.get(), w.stream));
  w.mlp_input = w.deep.get();
  return Status::OK();
}

// DlrmForward's backward from dtop, dLoss/d(the MLP's input): w.dinput (overwritten) and
// the bottom MLP's part of w.dparams.
Status GpuDenseModel::DlrmBackward(Worker& w, int B, const float* dtop) const {
  const size_t mp = mlp().num_params();
  STRATA_CUDA_TRY(cudaMemsetAsync(w.dinput.get(), 0, static_cast<size_t>(B) * dense_.input_width() * sizeof(float),
                                  w.stream));
  if (w.bottom) STRATA_RETURN_IF_ERROR(w.dz.Reserve(static_cast<size_t>(B) * spec_.embedding_dim));
  STRATA_RETURN_IF_ERROR(LaunchDotBackward(w.input.get(), w.bottom ? w.z.get() : nullptr, B, Dot(), dtop,
                                           w.dinput.get(), w.dz.get(), w.stream));
  if (!w.bottom) return Status::OK();
  const int nd = spec_.num_dense;
  STRATA_RETURN_IF_ERROR(w.ddense.Reserve(static_cast<size_t>(B) * nd));
  STRATA_RETURN_IF_ERROR(
      w.bottom->Backward(w.params.get() + mp, w.dense_in.get(), B, w.dz.get(), w.dparams.get() + mp, w.ddense.get()));
  return LaunchScatterDense(w.ddense.get(), B, dense_.input_width(), DenseColumn(), nd, w.dinput.get(), w.stream);
}

}  // namespace strata::gpu
