// Offline model views over checkpoints: load every row of a checkpoint into memory, fold
// delta exports onto it in order, and compare it with another checkpoint. Used by
// strata-inspect (diff, fold --check) and by any serving-side loader that applies
// base + deltas. Memory: about (row bytes + 40) per row; meant for offline tools.
//
// Thread safety: a LoadedModel is not synchronized; const methods may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/ckpt/format.h"
#include "strata/common/status.h"

namespace strata::ckpt {

class LoadedModel {
 public:
  const CheckpointMeta& meta() const { return meta_; }
  size_t row_bytes() const { return row_bytes_; }
  size_t size() const { return keys_.size(); }
  uint64_t key(size_t i) const { return keys_[i]; }
  const uint8_t* row(size_t i) const { return &rows_[i * row_bytes_]; }
  // The row of key (RowLayoutOf(meta().model)), or nullptr when absent.
  const uint8_t* Find(uint64_t key) const;

 private:
  friend Status LoadModel(const std::string&, LoadedModel*);
  friend Status ApplyDelta(const std::string&, LoadedModel*);
  // Inserts, or overwrites an existing key's row; returns true when the key was new.
  bool Upsert(uint64_t key, const uint8_t* row);
  // Removes key's row when present (the last row moves into its place).
  void Erase(uint64_t key);

  CheckpointMeta meta_;
  size_t row_bytes_ = 0;
  std::vector<uint64_t> keys_;
  std::vector<uint8_t> rows_;  // (size(), row_bytes) in the order keys were first seen
  std::unordered_map<uint64_t, size_t> index_;
};

// Reads the checkpoint (or delta) at ckpt_path, every rank file, checking counts and CRCs.
Status LoadModel(const std::string& ckpt_path, LoadedModel* out);

// Applies the delta at delta_path: erases its deleted keys, upserts its rows, replaces the dense state and the
// progress fields, and sets meta().pass to the delta's pass. InvalidArgument when the
// delta does not follow the model (its base_pass != meta().pass, or a different shape).
Status ApplyDelta(const std::string& delta_path, LoadedModel* model);

struct ModelDiff {
  uint64_t added = 0;      // keys in B only
  uint64_t removed = 0;    // keys in A only
  uint64_t changed = 0;    // keys in both whose rows differ in any byte
  uint64_t same = 0;
  double max_abs_diff = 0;        // over embedding and state floats of changed rows
  bool dense_shape_differs = false;
  bool dense_differs = false;     // params, m or v differ in any bit (or in shape)
  double dense_max_diff = 0;      // over params, m and v of equal shape
  int64_t dense_steps_a = 0, dense_steps_b = 0;
  int64_t pass_a = 0, pass_b = 0;

  // Rows, dense state and pass bitwise equal.
  bool identical() const {
    return added == 0 && removed == 0 && changed == 0 && !dense_differs && dense_steps_a == dense_steps_b && pass_a == pass_b;
  }
};

// Compares a (in memory) with the checkpoint at b_path, streaming b's rows (an increment's
// chain is loaded whole).
// InvalidArgument when the embedding dims differ.
Status DiffModel(const LoadedModel& a, const std::string& b_path, ModelDiff* diff);

}  // namespace strata::ckpt
