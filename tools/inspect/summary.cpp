// strata-inspect summary and verify: what a checkpoint holds, and whether it is intact.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "inspect.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/ckpt/verify.h"
#include "strata/common/partition.h"
#include "strata/model/dense_model.h"

namespace strata::inspect {
namespace {

double Norm(const float* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return std::sqrt(s);
}

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  const uintmax_t n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

std::string Join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s.empty() ? "(none)" : s;
}

// The slot names the writing job recorded (one per line), or none from older builds.
std::vector<std::string> SlotNames(const ckpt::CheckpointMeta& meta) {
  std::vector<std::string> names;
  size_t begin = 0;
  for (size_t end; (end = meta.slot_names.find('\n', begin)) != std::string::npos; begin = end + 1) {
    names.push_back(meta.slot_names.substr(begin, end - begin));
  }
  return names;
}

void PrintDense(const ckpt::CheckpointMeta& meta) {
  const DenseState& d = meta.dense;
  std::printf("dense        %zu params, %lld optimizer steps; |m| %.6g |v| %.6g\n", d.params.size(),
              static_cast<long long>(d.steps), Norm(d.m.data(), d.m.size()), Norm(d.v.data(), d.v.size()));
  const ModelSpec& m = meta.model;
  if (m.mlp_input_width() < 1 || DenseModel(m).num_params() != d.params.size()) {
    std::printf("  (parameter count does not match the model; run verify)\n");
    return;
  }
  for (const ParamBlock& b : DenseModel(m).Blocks()) {
    const size_t n = static_cast<size_t>(std::max(b.rows, 1)) * b.cols;
    const std::string shape = b.rows > 0 ? fmt::format("({}, {})", b.rows, b.cols) : fmt::format("({})", b.cols);
    std::printf("  %-18s %-12s |.| %.6g\n", b.name.c_str(), shape.c_str(), Norm(&d.params[b.offset], n));
  }
}

void PrintModel(const ModelSpec& m) {
  std::printf("model        %s: %d slots, %d dense, embedding dim %d, mlp %s; sparse %s (lr %g, rows of %zu B), dense %s (lr %g), seed %llu\n",
              ModelKindName(m.kind), m.num_slots, m.num_dense, m.embedding_dim, Join(m.mlp).c_str(),
              SparseOptimizerName(m.sparse_optimizer), m.lr_sparse, RowLayoutOf(m).bytes(),
              DenseOptimizerName(m.dense_optimizer), m.lr_dense,
              static_cast<unsigned long long>(m.seed));
  if (!m.mean_slots.empty()) std::printf("  mean-pooled slots %s\n", Join(m.mean_slots).c_str());
  if (m.row_dtype != RowDtype::kFp32) std::printf("  rows store %s embeddings\n", RowDtypeName(m.row_dtype));
  if (m.admit_min_count > 0) std::printf("  admission: a key gets a row once %d examples held it\n", m.admit_min_count);
  if (m.evict_unseen_passes > 0) std::printf("  eviction: a row not seen for %d passes is removed\n", m.evict_unseen_passes);
}

}  // namespace

Status Summary(const Args& args) {
  std::string path;
  ckpt::CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(OpenCheckpoint(args.positional[0], &path, &meta));
  const ModelSpec& m = meta.model;
  std::printf("checkpoint   %s (%s, format %d)\n", path.c_str(), ckpt::KindName(meta.kind), meta.format_version);
  if (meta.kind == ckpt::Kind::kIncrement) {
    std::printf("increment    on %s, rows trained in passes >= %u\n", ckpt::CheckpointName(meta.base_pass).c_str(),
                meta.min_last_pass);
  } else if (meta.kind == ckpt::Kind::kDelta) {
    std::printf("delta        on top of pass %lld, rows with last_pass >= %u\n",
                static_cast<long long>(meta.base_pass), meta.min_last_pass);
  }
  std::printf("progress     pass %lld, epoch %lld, %lld examples, global step %lld\n",
              static_cast<long long>(meta.progress.pass), static_cast<long long>(meta.progress.epoch),
              static_cast<long long>(meta.progress.examples), static_cast<long long>(meta.progress.global_step));
  if (m.evict_unseen_passes > 0) {
    std::printf("evicted      %lld rows in all\n", static_cast<long long>(meta.progress.rows_evicted));
  }
  std::printf("job          %d ranks, %d workers; data position", meta.ranks, meta.workers);
  for (uint64_t p : meta.data_position) std::printf(" %llu", static_cast<unsigned long long>(p));
  std::printf("\n");
  PrintModel(m);
  if (!meta.train_input.empty()) std::printf("input        %s\n", meta.train_input.c_str());
  std::printf("flags        %s\n", meta.flags.c_str());
  uint64_t total = 0, bytes = FileSize(path + "/" + ckpt::kMetaFileName);
  std::printf("files        %s %llu bytes\n", ckpt::kMetaFileName, static_cast<unsigned long long>(bytes));
  std::map<int, uint64_t> per_slot;
  uint64_t zero_rows = 0;  // every embedding weight exactly 0 (FTRL's L1 zeroes rows)
  const RowLayout layout = RowLayoutOf(meta.model);
  std::vector<float> w(static_cast<size_t>(layout.dim));
  for (int r = 0; r < meta.ranks; ++r) {
    const std::string file = ckpt::RankFileName(r);
    const uint64_t size = FileSize(path + "/" + file);
    std::printf("  rank %-4d  %s %llu rows, %llu bytes\n", r, file.c_str(),
                static_cast<unsigned long long>(meta.rank_files[r].rows), static_cast<unsigned long long>(size));
    total += meta.rank_files[r].rows;
    bytes += size;
    STRATA_RETURN_IF_ERROR(ckpt::ScanRankFile(path, meta, r, [&](const uint64_t* k, size_t n, const uint8_t* rows) {
      for (size_t i = 0; i < n; ++i) {
        ++per_slot[SlotOfKey(k[i])];
        layout.LoadEmbedding(rows + i * layout.bytes(), w.data());
        zero_rows += std::all_of(w.begin(), w.end(), [](float x) { return x == 0.0f; }) ? 1 : 0;
      }
      return Status::OK();
    }));
  }
  std::printf("rows         %llu in %llu bytes; %llu with every weight 0\n", static_cast<unsigned long long>(total),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(zero_rows));
  const std::vector<std::string> names = SlotNames(meta);
  for (const auto& [slot, n] : per_slot) {
    const bool named = slot < static_cast<int>(names.size());
    std::printf("  slot %-4d  %llu rows%s%s\n", slot, static_cast<unsigned long long>(n), named ? "  " : "",
                named ? names[slot].c_str() : "");
  }
  PrintDense(meta);
  return Status::OK();
}

// Verifies the checkpoint and, for an increment, every checkpoint of its chain.
Status Verify(const Args& args) {
  std::string path;
  STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(args.positional[0], &path));
  std::vector<ckpt::ChainLink> chain;
  const Status linked = ckpt::ResolveChain(path, &chain);
  if (!linked.ok()) {
    std::printf("BAD  %s\n", linked.message().c_str());
    return linked;
  }
  for (const ckpt::ChainLink& link : chain) {
    ckpt::VerifyReport report;
    const Status st = ckpt::VerifyCheckpoint(link.path, &report);
    for (const std::string& p : report.problems) std::printf("BAD  %s\n", p.c_str());
    if (!st.ok()) return st;
    std::printf("OK   %s: %llu rows in %d rank files, every checksum and count matches%s\n", link.path.c_str(),
                static_cast<unsigned long long>(report.rows), report.rank_files,
                link.meta.kind == ckpt::Kind::kIncrement ? " (an increment on the one above)" : "");
  }
  return Status::OK();
}

}  // namespace strata::inspect
