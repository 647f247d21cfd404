// Checkpointer: write, publish, export deltas, and resume.
#include "train/checkpointer.h"

#include <algorithm>
#include <cstring>

#include "strata/ckpt/checkpoint.h"
#include "strata/common/fault_point.h"

namespace strata {

Status Checkpointer::Write(const TrainProgress& progress, const HbmPs& hbm, RowStore& store,
                           std::shared_mutex& store_mu) {
  STRATA_RETURN_IF_ERROR(WriteOne(o_.checkpoint_dir, ckpt::CheckpointName(progress.passes), 0, 0,
                                  o_.keep_checkpoints, progress, hbm, store, store_mu));
  if (o_.export_delta_dir.empty()) return Status::OK();
  // The first export holds every row (the base); each later one the rows trained since.
  const uint32_t min_last_pass = last_export_pass_ < 0 ? 0 : static_cast<uint32_t>(last_export_pass_);
  STRATA_RETURN_IF_ERROR(WriteOne(o_.export_delta_dir, ckpt::DeltaName(++exports_), min_last_pass,
                                  std::max<int64_t>(0, last_export_pass_), 0, progress, hbm, store, store_mu));
  last_export_pass_ = progress.passes;
  return Status::OK();
}

Status Checkpointer::WriteOne(const std::string& dir, const std::string& final_name, uint32_t min_last_pass,
                              int64_t base_pass, int keep, const TrainProgress& progress, const HbmPs& hbm,
                              RowStore& store, std::shared_mutex& store_mu) {
  const std::string tmp = dir + "/" + ckpt::TmpName(final_name);
  const RowLayout layout{o_.model.embedding_dim};
  ckpt::RankFileInfo info;
  Status local;
  {
    std::lock_guard lock(store_mu);
    local = ckpt::WriteRankRows(tmp, comm_->rank(), layout, store, min_last_pass, &info);
  }
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  // Every rank's file and data position travel to rank 0.
  std::string mine(reinterpret_cast<const char*>(&info.rows), sizeof(info.rows));
  mine.append(reinterpret_cast<const char*>(&info.crc32), sizeof(info.crc32));
  mine.append(reinterpret_cast<const char*>(progress.local_lines.data()), progress.local_lines.size() * sizeof(uint64_t));
  std::vector<std::string> all;
  STRATA_RETURN_IF_ERROR(comm_->AllGather(mine, &all));
  if (comm_->rank() == 0) {
    ckpt::CheckpointMeta meta;
    meta.kind = min_last_pass > 0 || base_pass > 0 ? ckpt::Kind::kDelta : ckpt::Kind::kFull;
    meta.flags = o_.command_line;
    meta.model = o_.model;
    meta.pass = progress.passes;
    meta.epoch = progress.epoch;
    meta.examples = progress.examples;
    meta.global_step = progress.steps;
    meta.ranks = comm_->size();
    meta.workers = comm_->size() * o_.workers_per_rank;
    meta.base_pass = base_pass;
    meta.min_last_pass = min_last_pass;
    for (const std::string& part : all) {
      ckpt::RankFileInfo r;
      std::memcpy(&r.rows, part.data(), sizeof(r.rows));
      std::memcpy(&r.crc32, part.data() + sizeof(r.rows), sizeof(r.crc32));
      meta.rank_files.push_back(r);
      const size_t header = sizeof(r.rows) + sizeof(r.crc32);
      const uint64_t* lines = reinterpret_cast<const uint64_t*>(part.data() + header);
      meta.data_position.insert(meta.data_position.end(), lines, lines + (part.size() - header) / sizeof(uint64_t));
    }
    local = hbm.GetDenseState(&meta.dense);
    if (local.ok()) local = ckpt::WriteMeta(tmp, meta);
    FaultPoint("checkpoint-before-publish");
    if (local.ok()) local = ckpt::PublishCheckpoint(dir, ckpt::TmpName(final_name), final_name, keep);
  }
  return comm_->AgreeOn(local);
}

Status Checkpointer::Resume(const ckpt::RowSink& keep_rows, HbmPs* hbm, TrainProgress* progress) {
  std::string path;
  ckpt::CheckpointMeta meta;
  const std::string from = o_.resume == "LATEST" ? o_.checkpoint_dir : o_.resume;
  Status local = from.empty() ? Status::InvalidArgument("--resume needs --checkpoint-dir or a checkpoint path")
                              : ckpt::ResolveCheckpoint(from, &path);
  if (local.ok()) local = ckpt::ReadMeta(path, &meta);
  if (local.ok()) local = ckpt::CheckCompatible(meta, o_.model);
  const int workers = comm_->size() * o_.workers_per_rank;
  if (local.ok() && meta.workers != workers) {
    local = Status::InvalidArgument("--resume: the checkpoint was written by " + std::to_string(meta.workers) +
                                    " workers, this job has " + std::to_string(workers) +
                                    " (ranks x --workers-per-rank must stay the same)");
  }
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  local = ckpt::LoadOwnedRows(path, meta, comm_->rank(), comm_->size(), keep_rows);
  if (local.ok()) local = hbm->SetDenseState(meta.dense);
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  progress->passes = static_cast<int>(meta.pass);
  progress->epoch = static_cast<int>(meta.epoch);
  progress->examples = meta.examples;
  progress->steps = meta.global_step;
  const size_t first = static_cast<size_t>(comm_->rank()) * o_.workers_per_rank;
  progress->local_lines.assign(meta.data_position.begin() + first,
                               meta.data_position.begin() + first + o_.workers_per_rank);
  last_export_pass_ = meta.pass;
  return Status::OK();
}

}  // namespace strata
