// The dense model (strata/model/dense_model.h: dnn, deepfm, dcn, wdl, dlrm) on one CUDA
// worker, in DenseModel's parameter layout: from the pooled input a worker's Forward left in
// w.input, the cross layers, wdl's split or dlrm's bottom MLP and dot interaction before the
// MLP (CublasMlp), wdl's wide sum or deepfm's FM term after it, into w.logits; and the way
// back from the dlogits in w.logits into w.dparams and w.dinput. Every kernel is queued on
// the worker's stream. A GpuDenseModel holds only the model's shape: one serves every
// worker, and calls on different workers may run concurrently.
#pragma once

#include "cuda_worker.cuh"
#include "dlrm_kernels.cuh"
#include "wdl_kernels.cuh"
#include "strata/common/status.h"
#include "strata/model/dense_model.h"
#include "strata/model/model_spec.h"

namespace strata::gpu {

class GpuDenseModel {
 public:
  // dense must outlive this object.
  GpuDenseModel(const ModelSpec& spec, const DenseModel& dense) : spec_(spec), dense_(dense) {}

  // w.input (B, input width) into w.logits (B); w.mlp_input names the MLP's input after.
  Status Forward(Worker& w, int B, int S) const;
  // From the dlogits in w.logits: the dense gradient into w.dparams and dLoss/d(input)
  // into w.dinput. REQUIRES: Forward of the same batch on w, w.dparams and w.dinput reserved.
  Status Backward(Worker& w, int B, int S) const;

 private:
  Status DlrmForward(Worker& w, int B) const;
  Status DlrmBackward(Worker& w, int B, const float* dtop) const;

  WdlShape Wdl() const { return {spec_.num_slots, spec_.embedding_dim, spec_.num_dense}; }
  DotShape Dot() const { return {spec_.num_slots, spec_.embedding_dim, dense_.input_width(), spec_.num_dense > 0}; }
  int DenseColumn() const { return spec_.num_slots * spec_.row_dim(); }  // of an input row
  const Mlp& mlp() const { return dense_.mlp(); }

  ModelSpec spec_;
  const DenseModel& dense_;
};

}  // namespace strata::gpu
