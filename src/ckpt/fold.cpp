// LoadedModel, delta folding and model comparison (see ckpt/fold.h).
#include "strata/ckpt/fold.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "strata/ckpt/checkpoint.h"
#include "strata/common/row.h"

namespace strata::ckpt {
namespace {

double MaxAbsDiff(const float* a, const float* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    m = std::isnan(d) ? INFINITY : std::max(m, d);
  }
  return m;
}

void DiffDense(const DenseState& a, const DenseState& b, ModelDiff* diff) {
  diff->dense_steps_a = a.steps;
  diff->dense_steps_b = b.steps;
  const std::pair<const std::vector<float>*, const std::vector<float>*> vecs[] = {
      {&a.params, &b.params}, {&a.m, &b.m}, {&a.v, &b.v}};
  for (const auto& [x, y] : vecs) {
    if (x->size() != y->size()) {
      diff->dense_shape_differs = diff->dense_differs = true;
      continue;
    }
    diff->dense_max_diff = std::max(diff->dense_max_diff, MaxAbsDiff(x->data(), y->data(), x->size()));
    if (std::memcmp(x->data(), y->data(), x->size() * sizeof(float)) != 0) diff->dense_differs = true;
  }
}

}  // namespace

const uint8_t* LoadedModel::Find(uint64_t key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : row(it->second);
}

bool LoadedModel::Upsert(uint64_t key, const uint8_t* row) {
  auto [it, inserted] = index_.try_emplace(key, keys_.size());
  if (inserted) {
    keys_.push_back(key);
    rows_.resize(rows_.size() + row_bytes_);
  }
  std::memcpy(&rows_[it->second * row_bytes_], row, row_bytes_);
  return inserted;
}

void LoadedModel::Erase(uint64_t key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  const size_t hole = it->second, last = keys_.size() - 1;
  index_.erase(it);
  if (hole != last) {
    keys_[hole] = keys_[last];
    std::memcpy(&rows_[hole * row_bytes_], &rows_[last * row_bytes_], row_bytes_);
    index_[keys_[hole]] = hole;
  }
  keys_.pop_back();
  rows_.resize(last * row_bytes_);
}

namespace {

// Applies the checkpoint at path (an increment or delta over the model; its metadata in
// `over`): erases its deleted keys, then upserts every row.
Status Overlay(const std::string& path, const CheckpointMeta& over, LoadedModel* model,
               const std::function<void(uint64_t, const uint8_t*)>& upsert,
               const std::function<void(uint64_t)>& erase) {
  std::vector<uint64_t> deleted;
  STRATA_RETURN_IF_ERROR(LoadOwnedDeleted(path, over, 0, 1, &deleted));  // one rank owns every key
  for (uint64_t k : deleted) erase(k);
  for (int f = 0; f < over.ranks; ++f) {
    STRATA_RETURN_IF_ERROR(ScanRankFile(path, over, f, [&](const uint64_t* k, size_t n, const uint8_t* r) {
      for (size_t i = 0; i < n; ++i) upsert(k[i], r + i * model->row_bytes());
      return Status::OK();
    }));
  }
  return Status::OK();
}

}  // namespace

Status LoadModel(const std::string& ckpt_path, LoadedModel* out) {
  *out = LoadedModel();
  std::vector<ChainLink> chain;
  STRATA_RETURN_IF_ERROR(ResolveChain(ckpt_path, &chain));
  const ChainLink& first = chain.front();
  out->meta_ = first.meta;
  out->row_bytes_ = RowLayoutOf(out->meta_.model).bytes();
  for (int f = 0; f < out->meta_.ranks; ++f) {
    STRATA_RETURN_IF_ERROR(ScanRankFile(first.path, out->meta_, f, [&](const uint64_t* k, size_t n, const uint8_t* r) {
      for (size_t i = 0; i < n; ++i) {
        if (!out->Upsert(k[i], r + i * out->row_bytes_)) {
          return Status::Corruption(first.path + "/" + RankFileName(f) + ": duplicate key " + std::to_string(k[i]));
        }
      }
      return Status::OK();
    }));
  }
  for (size_t i = 1; i < chain.size(); ++i) {  // increments: their rows replace the bases'
    STRATA_RETURN_IF_ERROR(CheckCompatible(out->meta_, chain[i].meta.model));
    STRATA_RETURN_IF_ERROR(Overlay(chain[i].path, chain[i].meta, out,
                                   [out](uint64_t k, const uint8_t* r) { out->Upsert(k, r); },
                                   [out](uint64_t k) { out->Erase(k); }));
    out->meta_ = chain[i].meta;
  }
  return Status::OK();
}

Status ApplyDelta(const std::string& delta_path, LoadedModel* model) {
  CheckpointMeta delta;
  STRATA_RETURN_IF_ERROR(ReadMeta(delta_path, &delta));
  CheckpointMeta& m = model->meta_;
  if (delta.kind != Kind::kDelta) return Status::InvalidArgument(delta_path + ": not a delta export");
  if (delta.base_pass != m.progress.pass) {
    return Status::InvalidArgument(delta_path + ": applies on top of pass " + std::to_string(delta.base_pass) +
                                   ", the model is at pass " + std::to_string(m.progress.pass) + " (missing or reordered delta?)");
  }
  STRATA_RETURN_IF_ERROR(CheckCompatible(m, delta.model));
  STRATA_RETURN_IF_ERROR(Overlay(delta_path, delta, model, [model](uint64_t k, const uint8_t* r) { model->Upsert(k, r); },
                                 [model](uint64_t k) { model->Erase(k); }));
  m.progress = delta.progress;
  m.workers = delta.workers;
  m.data_position = delta.data_position;
  m.dense = delta.dense;
  return Status::OK();
}

// B's rows in batches: streamed from its rank files, or, for an increment, from its
// chain loaded whole (the increment alone holds only some of them).
Status ScanModel(const std::string& path, const CheckpointMeta& meta, const RowSink& sink) {
  if (meta.kind == Kind::kIncrement) {
    LoadedModel whole;
    STRATA_RETURN_IF_ERROR(LoadModel(path, &whole));
    for (size_t i = 0; i < whole.size(); ++i) {
      const uint64_t key = whole.key(i);
      STRATA_RETURN_IF_ERROR(sink(&key, 1, whole.row(i)));
    }
    return Status::OK();
  }
  for (int f = 0; f < meta.ranks; ++f) STRATA_RETURN_IF_ERROR(ScanRankFile(path, meta, f, sink));
  return Status::OK();
}

Status DiffModel(const LoadedModel& a, const std::string& b_path, ModelDiff* diff) {
  *diff = ModelDiff();
  CheckpointMeta b;
  STRATA_RETURN_IF_ERROR(ReadMeta(b_path, &b));
  const RowLayout layout = RowLayoutOf(a.meta().model), other = RowLayoutOf(b.model);
  std::vector<float> fa(layout.floats()), fb(layout.floats());
  if (other.dim != layout.dim || other.state_floats != layout.state_floats || other.dtype != layout.dtype) {
    auto describe = [](const RowLayout& l) {
      return "embedding dim " + std::to_string(l.dim) + " (" + RowDtypeName(l.dtype) + ") and " +
             std::to_string(l.state_floats) + " optimizer state floats";
    };
    return Status::InvalidArgument(b_path + ": rows of " + describe(other) + ", the other model's " + describe(layout));
  }
  const size_t row_bytes = a.row_bytes();
  uint64_t in_both = 0;
  STRATA_RETURN_IF_ERROR(ScanModel(b_path, b, [&](const uint64_t* k, size_t n, const uint8_t* r) {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* ra = a.Find(k[i]);
      const uint8_t* rb = r + i * row_bytes;
      if (!ra) {
        ++diff->added;
        continue;
      }
      ++in_both;
      if (std::memcmp(ra, rb, row_bytes) == 0) {
        ++diff->same;
        continue;
      }
      ++diff->changed;
      layout.LoadFloats(ra, fa.data());
      layout.LoadFloats(rb, fb.data());
      diff->max_abs_diff = std::max(diff->max_abs_diff, MaxAbsDiff(fa.data(), fb.data(), layout.floats()));
    }
    return Status::OK();
  }));
  diff->removed = a.size() - in_both;
  diff->pass_a = a.meta().progress.pass;
  diff->pass_b = b.progress.pass;
  DiffDense(a.meta().dense, b.dense, diff);
  return Status::OK();
}

}  // namespace strata::ckpt
