// Checkpointer: write, publish, export deltas, and resume.
#include "train/checkpointer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>

#include "strata/ckpt/checkpoint.h"
#include "strata/comm/wire.h"
#include "strata/common/fault_point.h"

namespace strata {

bool Checkpointer::PeriodicDue(int passes) const {
  return enabled() && o_.checkpoint_every_passes > 0 && passes % o_.checkpoint_every_passes == 0;
}

Status Checkpointer::Write(const TrainProgress& progress, const HbmPs& hbm, ShardServer* server) {
  STRATA_RETURN_IF_ERROR(WriteOne(o_.checkpoint_dir, ckpt::CheckpointName(progress.passes), 0, 0,
                                  o_.keep_checkpoints, progress, hbm, server));
  last_written_ = progress.passes;
  if (o_.export_delta_dir.empty()) return Status::OK();
  // The first export holds every row (the base); each later one the rows trained since.
  const uint32_t min_last_pass = last_export_pass_ < 0 ? 0 : static_cast<uint32_t>(last_export_pass_);
  STRATA_RETURN_IF_ERROR(WriteOne(o_.export_delta_dir, ckpt::DeltaName(++exports_), min_last_pass,
                                  std::max<int64_t>(0, last_export_pass_), 0, progress, hbm, server));
  last_export_pass_ = progress.passes;
  return Status::OK();
}

ckpt::CheckpointMeta Checkpointer::MetaOf(const TrainProgress& progress, uint32_t min_last_pass,
                                          int64_t base_pass) const {
  ckpt::CheckpointMeta meta;
  meta.kind = min_last_pass > 0 || base_pass > 0 ? ckpt::Kind::kDelta : ckpt::Kind::kFull;
  meta.flags = o_.command_line;
  meta.train_input = train_input_;
  meta.input_schema = o_.input.text;
  meta.batch_size = o_.batch_size;
  for (const std::string& name : o_.input.slot_names) meta.slot_names += name + "\n";
  meta.model = o_.model;
  meta.progress = {progress.passes, progress.epoch, progress.examples, progress.steps};
  meta.ranks = comm_->size();
  meta.workers = comm_->size() * o_.workers_per_rank;
  meta.base_pass = base_pass;
  meta.min_last_pass = min_last_pass;
  return meta;
}

// A failed write leaves no temporary directory behind: every rank is done with it once the
// failure is agreed, so rank 0 removes it (the previous checkpoint stays selected).
Status Checkpointer::WriteOne(const std::string& dir, const std::string& final_name, uint32_t min_last_pass,
                              int64_t base_pass, int keep, const TrainProgress& progress, const HbmPs& hbm,
                              ShardServer* server) {
  const std::string tmp = dir + "/" + ckpt::TmpName(final_name);
  const Status st = WriteAndPublish(dir, tmp, final_name, min_last_pass, base_pass, keep, progress, hbm, server);
  if (!st.ok() && comm_->rank() == 0) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
  }
  return st;
}

Status Checkpointer::WriteAndPublish(const std::string& dir, const std::string& tmp, const std::string& final_name,
                                     uint32_t min_last_pass, int64_t base_pass, int keep, const TrainProgress& progress,
                                     const HbmPs& hbm, ShardServer* server) {
  const RowLayout layout = RowLayoutOf(o_.model);
  ckpt::RankFileInfo info;
  Status local = server->WithStore([&](RowStore& store) {
    return ckpt::WriteRankRows(tmp, comm_->rank(), layout, store, min_last_pass, &info);
  });
  if (local.ok()) local = InjectedFailure("checkpoint", comm_->rank());
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  // Every rank's file and data position travel to rank 0.
  std::string mine;
  wire::Put(&mine, info.rows);
  wire::Put(&mine, info.crc32);
  wire::PutBytes(&mine, progress.local_lines.data(), progress.local_lines.size() * sizeof(uint64_t));
  std::vector<std::string> all;
  STRATA_RETURN_IF_ERROR(comm_->AllGather(mine, &all));
  if (comm_->rank() == 0) {
    ckpt::CheckpointMeta meta = MetaOf(progress, min_last_pass, base_pass);
    for (const std::string& part : all) {
      wire::Reader in(part);
      ckpt::RankFileInfo r;
      r.rows = in.Get<decltype(r.rows)>();
      r.crc32 = in.Get<decltype(r.crc32)>();
      meta.rank_files.push_back(r);
      while (!in.done()) meta.data_position.push_back(in.Get<uint64_t>());
    }
    local = hbm.GetDenseState(&meta.dense);
    if (local.ok()) local = ckpt::WriteMeta(tmp, meta);
    FaultPoint("checkpoint-before-publish");
    if (local.ok()) local = ckpt::PublishCheckpoint(dir, ckpt::TmpName(final_name), final_name, keep);
  }
  return comm_->AgreeOn(local);
}

Status Checkpointer::ResumeWanted(bool* resume) {
  const bool in_dir = o_.resume.empty() || o_.resume == "auto";
  if (!in_dir || o_.checkpoint_dir.empty()) {
    *resume = !o_.resume.empty();
    return Status::OK();
  }
  // Rank 0 looks (the directory is shared); every rank follows its answer.
  std::string latest;
  int64_t found[1] = {comm_->rank() == 0 && ckpt::ResolveCheckpoint(o_.checkpoint_dir, &latest).ok() ? 1 : 0};
  STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(found, 1));
  *resume = found[0] != 0;
  if (*resume && o_.resume.empty()) {
    return Status::InvalidArgument("--checkpoint-dir " + o_.checkpoint_dir +
                                   " holds an earlier run's checkpoints, which this run would overwrite: "
                                   "pass --resume (or --resume=auto) to continue it, or choose another directory");
  }
  return Status::OK();
}

// Reads `from`'s metadata (a checkpoint, or LATEST of a directory), has `check` vet it on
// every rank, then loads the rows this rank owns and the dense model.
Status Checkpointer::Load(const std::string& from, const char* flag, ShardServer* server, HbmPs* hbm,
                          const std::function<Status(const ckpt::CheckpointMeta&)>& check,
                          ckpt::CheckpointMeta* meta) {
  std::string path;
  Status local = from.empty() ? Status::InvalidArgument(std::string(flag) + " needs --checkpoint-dir or a checkpoint path")
                              : ckpt::ResolveCheckpoint(from, &path);
  if (local.ok()) local = ckpt::ReadMeta(path, meta);
  if (local.ok()) local = ckpt::CheckCompatible(*meta, o_.model);
  if (local.ok()) local = check(*meta);
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  local = ckpt::LoadOwnedRows(path, *meta, comm_->rank(), comm_->size(),
                              [server](const uint64_t* k, size_t n, const uint8_t* r) { return server->Load(k, n, r); });
  if (local.ok()) local = hbm->SetDenseState(meta->dense);
  return comm_->AgreeOn(local);
}

// Resuming continues the same run: the same W (the data position is per worker) and the
// same --train files (the position counts their lines).
Status Checkpointer::CheckSameRun(const ckpt::CheckpointMeta& meta) const {
  const int workers = comm_->size() * o_.workers_per_rank;
  if (meta.workers != workers) {
    return Status::InvalidArgument("--resume: the checkpoint was written by " + std::to_string(meta.workers) +
                                   " workers, this job has " + std::to_string(workers) +
                                   " (ranks x --workers-per-rank must stay the same)");
  }
  if (!meta.train_input.empty() && meta.train_input != train_input_) {
    return Status::InvalidArgument("--resume: the checkpoint was trained on --train input (" + meta.train_input +
                                   ") other than this run's (" + train_input_ +
                                   "); its data position fits those files only. To train its model on new "
                                   "input, start a new run with --init-from");
  }
  return Status::OK();
}

Status Checkpointer::Resume(ShardServer* server, HbmPs* hbm, TrainProgress* progress) {
  const std::string from = o_.resume == "LATEST" || o_.resume == "auto" ? o_.checkpoint_dir : o_.resume;
  ckpt::CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(Load(from, "--resume", server, hbm, [this](const ckpt::CheckpointMeta& m) { return CheckSameRun(m); },
                              &meta));
  progress->passes = static_cast<int>(meta.progress.pass);
  progress->epoch = static_cast<int>(meta.progress.epoch);
  progress->examples = meta.progress.examples;
  progress->steps = meta.progress.global_step;
  const size_t first = static_cast<size_t>(comm_->rank()) * o_.workers_per_rank;
  progress->local_lines.assign(meta.data_position.begin() + first,
                               meta.data_position.begin() + first + o_.workers_per_rank);
  last_export_pass_ = meta.progress.pass;
  return Status::OK();
}

// The model and its counters carry over (pass numbers, steps and Adam's step count go on);
// the input starts at its first line, in epoch 0. Delta exports start with a full base.
Status Checkpointer::InitFrom(ShardServer* server, HbmPs* hbm, TrainProgress* progress) {
  ckpt::CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(Load(o_.init_from, "--init-from", server, hbm,
                              [](const ckpt::CheckpointMeta&) { return Status::OK(); }, &meta));
  progress->passes = static_cast<int>(meta.progress.pass);
  progress->epoch = 0;
  progress->examples = meta.progress.examples;
  progress->steps = meta.progress.global_step;
  progress->local_lines.assign(o_.workers_per_rank, 0);
  return Status::OK();
}

}  // namespace strata
