// VerifyCheckpoint: reads every dataset of a checkpoint and checks it against meta.h5
// and the model's shape (see ckpt/verify.h).
#include "strata/ckpt/verify.h"

#include <algorithm>
#include <filesystem>

#include "strata/ckpt/checkpoint.h"
#include "strata/model/dense_model.h"

namespace strata::ckpt {
namespace {

void CheckDense(const CheckpointMeta& meta, const std::string& where, std::vector<std::string>* problems) {
  const ModelSpec& m = meta.model;
  const bool valid_shape = m.mlp_input_width() >= 1 && std::all_of(m.mlp.begin(), m.mlp.end(), [](int w) { return w >= 1; });
  if (!valid_shape) {
    problems->push_back(where + ": /model describes no valid MLP");
    return;
  }
  const size_t p = DenseModel(m).num_params();
  if (meta.dense.params.size() != p) {
    problems->push_back(where + ": /dense/params has " + std::to_string(meta.dense.params.size()) +
                        " floats, the model needs " + std::to_string(p));
  }
  const size_t moments = m.dense_optimizer == DenseOptimizerKind::kAdam ? meta.dense.params.size() : 0;
  if (meta.dense.m.size() != moments || meta.dense.v.size() != moments) {
    problems->push_back(where + ": /dense/m and /dense/v have " + std::to_string(meta.dense.m.size()) + " and " +
                        std::to_string(meta.dense.v.size()) + " floats, expected " + std::to_string(moments));
  }
  if (meta.dense.steps < 0) problems->push_back(where + ": /dense steps is negative");
}

}  // namespace

Status VerifyCheckpoint(const std::string& ckpt_path, VerifyReport* report) {
  *report = VerifyReport();
  CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(ReadMeta(ckpt_path, &meta));
  std::vector<std::string>& problems = report->problems;
  CheckDense(meta, ckpt_path + "/" + kMetaFileName, &problems);
  std::vector<uint64_t> keys;
  const RowLayout layout = RowLayoutOf(meta.model);
  for (int f = 0; f < meta.ranks; ++f) {
    const size_t before = keys.size();
    uint64_t stale = 0;  // rows of an increment or delta older than it says it holds
    Status st = ScanRankFile(ckpt_path, meta, f, [&](const uint64_t* k, size_t n, const uint8_t* rows) {
      keys.insert(keys.end(), k, k + n);
      for (size_t i = 0; i < n; ++i) stale += layout.LastPass(rows + i * layout.bytes()) < meta.min_last_pass;
      return Status::OK();
    });
    if (stale > 0) {
      problems.push_back(ckpt_path + "/" + RankFileName(f) + ": " + std::to_string(stale) +
                         " rows last trained before pass " + std::to_string(meta.min_last_pass) + ", which this " +
                         KindName(meta.kind) + " holds from");
    }
    if (st.ok()) {
      ++report->rank_files;
      report->rows += keys.size() - before;
    } else {
      problems.push_back(st.message());
      keys.resize(before);
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(ckpt_path + "/" + RankFileName(meta.ranks), ec)) {
    problems.push_back(ckpt_path + "/" + RankFileName(meta.ranks) + ": present, but " + kMetaFileName +
                       " records only " + std::to_string(meta.ranks) + " rank files");
  }
  std::sort(keys.begin(), keys.end());
  auto dup = std::adjacent_find(keys.begin(), keys.end());
  if (dup != keys.end()) {
    const uint64_t first = *dup;
    const size_t count = keys.size() - (std::unique(keys.begin(), keys.end()) - keys.begin());
    problems.push_back(ckpt_path + ": " + std::to_string(count) + " duplicate keys across rank files (first " +
                       std::to_string(first) + ")");
  }
  if (problems.empty()) return Status::OK();
  return Status::Corruption(problems.front() +
                            (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
}

}  // namespace strata::ckpt
