// ModelSpec: the shape of the CTR model. Flags that change it change the parameters'
// meaning, so checkpoints record it and resume refuses a different one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/common/row.h"
#include "strata/model/lr_schedule.h"

namespace strata {

// Widest embedding --embedding-dim accepts.
constexpr int kMaxEmbeddingDim = 1024;
// Most cross layers --cross-layers accepts.
constexpr int kMaxCrossLayers = 16;

// The model above the pooled embeddings (--model; strata/model/dense_model.h): dnn, the MLP
// alone; deepfm, the MLP's logit plus the factorization machine's second-order term over the
// slots' embeddings; dcn, DCN-v2's cross layers before the MLP; dlrm, DLRM's bottom MLP of
// the dense features and the pairwise dot products of all vectors before the MLP; wdl, a wide
// part (one scalar weight a key, kept in its row after the embedding, summed over the
// example's keys) added to the MLP's logit.
enum class ModelKind { kDnn, kDeepFm, kDcn, kDlrm, kWdl };

enum class SparseOptimizerKind { kAdagrad, kSgd, kRowwiseAdagrad, kAdam, kFtrl };
enum class DenseOptimizerKind { kAdam, kSgd };

struct ModelSpec {
  ModelKind kind = ModelKind::kDnn;
  int num_slots = 26;              // Criteo's categorical columns
  int num_dense = 13;              // Criteo's integer columns
  int embedding_dim = 16;
  std::vector<int> mlp = {512, 256, 128};  // hidden widths; the output layer (1) is implied
  int cross_layers = 3;            // dcn: cross layers
  int cross_rank = 0;              // dcn: rank of each layer's matrix (0: full rank)
  std::vector<int> bottom_mlp = {512, 256, 64};  // dlrm: the dense features' hidden widths; a
                                                 // last layer to embedding_dim is implied
  std::vector<int> mean_slots;     // slots pooled by the mean of their keys (ascending); the rest sum
  SparseOptimizerKind sparse_optimizer = SparseOptimizerKind::kAdagrad;
  DenseOptimizerKind dense_optimizer = DenseOptimizerKind::kAdam;
  float lr_sparse = 0.05f;
  float lr_dense = 0.001f;
  LrSchedule schedule;             // of both rates, by global step (not part of the model's shape)
  float adagrad_initial_accumulator = 1e-6f;  // keeps the first step finite
  float ftrl_l1 = 0.0f;            // FTRL-proximal: L1 strength (weights with |z| <= l1 are 0)
  float ftrl_l2 = 0.0f;            // FTRL-proximal: L2 strength
  float ftrl_beta = 1.0f;          // FTRL-proximal: the rate's smoothing, alpha / (beta + sqrt(n))
  float init_scale = 0.01f;        // embedding init: uniform(-s, s) from (key, seed)
  uint64_t seed = 2026;
  int admit_min_count = 0;         // examples that must hold a key before it gets a row (0: off)
  int evict_unseen_passes = 0;     // a row not seen for this many passes is removed (0: never)
  RowDtype row_dtype = RowDtype::kFp32;  // the embedding's type in stored rows (common/row.h)

  // Floats a row's embedding holds: the embedding, and wdl's wide weight after it.
  int row_dim() const { return embedding_dim + (kind == ModelKind::kWdl ? 1 : 0); }
  // Columns of a pooled input row: each slot's row_dim pooled floats, then the dense features.
  int pooled_width() const { return num_slots * row_dim() + num_dense; }
  // Columns of the MLP's input: the slots' embeddings (no wide weight), then the dense features.
  int mlp_input_width() const { return num_slots * embedding_dim + num_dense; }
  bool operator==(const ModelSpec&) const = default;
};

// Floats of sparse optimizer state a row holds (a coordinate is one of row_dim): one a coordinate (Adagrad, and SGD, which
// keeps them unread), one a row (row-wise Adagrad: about half the bytes of a row), two a
// coordinate (FTRL's z and n), or two a coordinate and the row's step count (lazy Adam).
inline int SparseStateFloats(const ModelSpec& spec) {
  switch (spec.sparse_optimizer) {
    case SparseOptimizerKind::kRowwiseAdagrad: return 1;
    case SparseOptimizerKind::kAdam: return 2 * spec.row_dim() + 1;
    case SparseOptimizerKind::kFtrl: return 2 * spec.row_dim();
    default: return spec.row_dim();
  }
}

// The flag and checkpoint name of a sparse optimizer.
inline const char* SparseOptimizerName(SparseOptimizerKind k) {
  switch (k) {
    case SparseOptimizerKind::kAdagrad: return "adagrad";
    case SparseOptimizerKind::kSgd: return "sgd";
    case SparseOptimizerKind::kRowwiseAdagrad: return "rowwise-adagrad";
    case SparseOptimizerKind::kAdam: return "adam";
    case SparseOptimizerKind::kFtrl: return "ftrl";
  }
  return "?";
}

// The flag and checkpoint name of a model.
inline const char* ModelKindName(ModelKind k) {
  switch (k) {
    case ModelKind::kDeepFm: return "deepfm";
    case ModelKind::kDcn: return "dcn";
    case ModelKind::kDlrm: return "dlrm";
    case ModelKind::kWdl: return "wdl";
    default: return "dnn";
  }
}

// The flag and checkpoint name of a dense optimizer.
inline const char* DenseOptimizerName(DenseOptimizerKind k) { return k == DenseOptimizerKind::kAdam ? "adam" : "sgd"; }

// The layout of the stored rows of a model (common/row.h); the HBM-PS computes on the
// same layout with RowDtype::kFp32.
inline RowLayout RowLayoutOf(const ModelSpec& spec) {
  return RowLayout(spec.row_dim(), SparseStateFloats(spec), spec.row_dtype);
}

}  // namespace strata
