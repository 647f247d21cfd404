// Checkpointer: write, publish, export deltas, and resume.
#include "train/checkpointer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>

#include "strata/ckpt/checkpoint.h"
#include "strata/comm/wire.h"
#include "strata/common/fault_point.h"
#include "strata/common/stopwatch.h"

namespace strata {

bool Checkpointer::PeriodicDue(int passes) const {
  return enabled() && o_.checkpoint_every_passes > 0 && passes % o_.checkpoint_every_passes == 0;
}

Checkpointer::Target Checkpointer::NextCheckpoint(int passes) const {
  Target t{o_.checkpoint_dir, ckpt::CheckpointName(passes)};
  t.keep = o_.keep_checkpoints;
  const int every = o_.checkpoint_incremental;
  if (every > 1 && chain_pass_ >= 0 && chain_pass_ < passes && chain_increments_ + 1 < every) {
    t.kind = ckpt::Kind::kIncrement;
    t.min_last_pass = static_cast<uint32_t>(chain_pass_);
    t.base_pass = chain_pass_;
  }
  return t;
}

void Checkpointer::Attach(ShardServer* server) const {
  server->LogChanged(incremental());
  server->LogErased(o_.model.evict_unseen_passes > 0 && (incremental() || (enabled() && !o_.export_delta_dir.empty())));
}

Status Checkpointer::Write(const TrainProgress& progress, const HbmPs& hbm, ShardServer* server) {
  const Target next = NextCheckpoint(progress.passes);
  STRATA_RETURN_IF_ERROR(WriteOne(next, progress, hbm, server));
  last_written_ = progress.passes;
  chain_pass_ = progress.passes;
  chain_increments_ = next.kind == ckpt::Kind::kIncrement ? chain_increments_ + 1 : 0;
  if (!o_.export_delta_dir.empty()) {
    // The first export holds every row (the base); each later one the rows trained since.
    Target delta{o_.export_delta_dir, ckpt::DeltaName(++exports_)};
    delta.min_last_pass = last_export_pass_ < 0 ? 0 : static_cast<uint32_t>(last_export_pass_);
    delta.base_pass = std::max<int64_t>(0, last_export_pass_);
    delta.kind = delta.min_last_pass > 0 || delta.base_pass > 0 ? ckpt::Kind::kDelta : ckpt::Kind::kFull;
    STRATA_RETURN_IF_ERROR(WriteOne(delta, progress, hbm, server));
    last_export_pass_ = progress.passes;
  }
  server->ForgetErasedBefore(progress.passes);  // the next increment and delta build on this pass
  return Status::OK();
}

ckpt::CheckpointMeta Checkpointer::MetaOf(const TrainProgress& progress, const Target& t) const {
  ckpt::CheckpointMeta meta;
  meta.kind = t.kind;
  meta.flags = o_.command_line;
  meta.train_input = train_input_;
  meta.input_schema = o_.input.text;
  meta.batch_size = o_.batch_size;
  for (const std::string& name : o_.input.slot_names) meta.slot_names += name + "\n";
  meta.model = o_.model;
  meta.progress = {progress.passes, progress.epoch, progress.examples, progress.steps, progress.rows_evicted};
  meta.ranks = comm_->size();
  meta.workers = comm_->size() * o_.workers_per_rank;
  meta.base_pass = t.base_pass;
  meta.min_last_pass = t.min_last_pass;
  return meta;
}

// A failed write leaves no temporary directory behind: every rank is done with it once the
// failure is agreed, so rank 0 removes it (the previous checkpoint stays selected).
Status Checkpointer::WriteOne(const Target& t, const TrainProgress& progress, const HbmPs& hbm, ShardServer* server) {
  const std::string tmp = t.dir + "/" + ckpt::TmpName(t.final_name);
  const Status st = WriteAndPublish(t, tmp, progress, hbm, server);
  if (!st.ok() && comm_->rank() == 0) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
  }
  return st;
}

Status Checkpointer::WriteAndPublish(const Target& t, const std::string& tmp, const TrainProgress& progress,
                                     const HbmPs& hbm, ShardServer* server) {
  const Stopwatch watch;
  ckpt::RankFileInfo info;
  Status local = WriteRows(t, tmp, server, &info);
  if (local.ok()) local = WriteKeyFiles(t, tmp, progress, server);
  if (local.ok()) local = InjectedFailure("checkpoint", comm_->rank());
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  // Every rank's file and data position travel to rank 0.
  std::string mine;
  wire::Put(&mine, info.rows);
  wire::Put(&mine, info.crc32);
  wire::PutBytes(&mine, progress.local_lines.data(), progress.local_lines.size() * sizeof(uint64_t));
  std::vector<std::string> all;
  STRATA_RETURN_IF_ERROR(comm_->AllGather(mine, &all));
  if (comm_->rank() == 0) local = PublishOnRankZero(t, tmp, progress, hbm, all, watch);
  return comm_->AgreeOn(local);
}

namespace {

// The rows of keys (sorted, distinct, each one the store holds), read a batch at a time. A
// key the store lacks is left out, and the file writer, told the count in advance, fails.
ckpt::RowSource RowsOf(RowStore& store, const std::vector<uint64_t>& keys) {
  auto scan = [&store, &keys](const ckpt::RowVisitor& visit) {
    constexpr size_t kBatch = 4096;
    const size_t rb = store.row_bytes();
    std::vector<uint8_t> rows(kBatch * rb), found(kBatch);
    for (size_t at = 0; at < keys.size(); at += kBatch) {
      const size_t n = std::min(kBatch, keys.size() - at);
      STRATA_RETURN_IF_ERROR(store.Get(keys.data() + at, n, rows.data(), found.data()));
      for (size_t i = 0; i < n; ++i) {
        if (found[i]) visit(keys[at + i], rows.data() + i * rb);
      }
    }
    return Status::OK();
  };
  return ckpt::RowSource{scan, keys.size()};
}

}  // namespace

// An increment reads the rows pushed back since the previous checkpoint (the server's log)
// by key, so its cost follows the rows that changed, not the model; the log having chosen
// them and counted them, they are written as a full checkpoint's are (min_last_pass 0: the
// direct path). A full checkpoint and a delta scan the store (and a full one restarts the
// log).
Status Checkpointer::WriteRows(const Target& t, const std::string& tmp, ShardServer* server,
                               ckpt::RankFileInfo* info) const {
  const RowLayout layout = RowLayoutOf(o_.model);
  if (!incremental() || t.kind == ckpt::Kind::kDelta) {
    return server->WithStore([&](RowStore& store) {
      return ckpt::WriteRankRows(tmp, comm_->rank(), layout, store, t.min_last_pass, info);
    });
  }
  return server->WithChanged([&](RowStore& store, const std::vector<uint64_t>& changed) {
    if (t.kind == ckpt::Kind::kFull) return ckpt::WriteRankRows(tmp, comm_->rank(), layout, store, 0, info);
    return ckpt::WriteRankRows(tmp, comm_->rank(), layout, RowsOf(store, changed), 0, info);
  });
}

// The pending keys (full checkpoints and increments, with admission) and the keys erased
// since the base (increments and deltas, with eviction).
Status Checkpointer::WriteKeyFiles(const Target& t, const std::string& tmp, const TrainProgress& progress,
                                   ShardServer* server) const {
  std::vector<uint64_t> keys;
  if (server->admits() && t.kind != ckpt::Kind::kDelta) {
    std::vector<uint8_t> counts;
    std::vector<uint32_t> last;
    server->PendingThrough(progress.passes - 1, &keys, &counts, &last);
    STRATA_RETURN_IF_ERROR(ckpt::WritePending(tmp, comm_->rank(), keys, std::move(counts), std::move(last)));
  }
  if (o_.model.evict_unseen_passes == 0 || t.kind == ckpt::Kind::kFull) return Status::OK();
  STRATA_RETURN_IF_ERROR(server->ErasedSince(static_cast<int>(t.base_pass), &keys));
  return ckpt::WriteDeleted(tmp, comm_->rank(), keys);
}

// Rank 0: the metadata from every rank's file info and data position, then the publish.
Status Checkpointer::PublishOnRankZero(const Target& t, const std::string& tmp, const TrainProgress& progress,
                                       const HbmPs& hbm, const std::vector<std::string>& all, const Stopwatch& watch) {
  ckpt::CheckpointMeta meta = MetaOf(progress, t);
  uint64_t rows = 0;
  for (const std::string& part : all) {
    wire::Reader in(part);
    ckpt::RankFileInfo r;
    r.rows = in.Get<decltype(r.rows)>();
    r.crc32 = in.Get<decltype(r.crc32)>();
    meta.rank_files.push_back(r);
    rows += r.rows;
    while (!in.done()) meta.data_position.push_back(in.Get<uint64_t>());
  }
  STRATA_RETURN_IF_ERROR(hbm.GetDenseState(&meta.dense));
  STRATA_RETURN_IF_ERROR(ckpt::WriteMeta(tmp, meta));
  FaultPoint("checkpoint-before-publish");
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) bytes += e.file_size(ec);
  STRATA_RETURN_IF_ERROR(ckpt::PublishCheckpoint(t.dir, ckpt::TmpName(t.final_name), t.final_name, t.keep));
  const std::string on = t.kind == ckpt::Kind::kIncrement ? " on " + ckpt::CheckpointName(t.base_pass)
                         : t.kind == ckpt::Kind::kDelta  ? " on pass " + std::to_string(t.base_pass)
                                                         : "";
  fmt::print("{}: checkpoint {} ({}{}): {} rows, {:.2f} MB in {:.3f} s\n", o_.program, t.final_name,
             ckpt::KindName(t.kind), on, rows, bytes / 1e6, watch.Seconds());
  std::fflush(stdout);
  return Status::OK();
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

// Reads `from`'s chain (a checkpoint, or LATEST of a directory, with the bases an increment
// builds on), has `check` vet the newest on every rank, then loads the rows this rank owns,
// oldest first (an increment's rows replace its bases'), and the newest's dense model.
Status Checkpointer::Load(const std::string& from, const char* flag, ShardServer* server, HbmPs* hbm,
                          const std::function<Status(const ckpt::CheckpointMeta&)>& check,
                          std::vector<ckpt::ChainLink>* chain) {
  std::string path;
  Status local = from.empty() ? Status::InvalidArgument(std::string(flag) + " needs --checkpoint-dir or a checkpoint path")
                              : ckpt::ResolveCheckpoint(from, &path);
  if (local.ok()) local = ckpt::ResolveChain(path, chain);
  for (size_t i = 0; local.ok() && i < chain->size(); ++i) local = ckpt::CheckCompatible((*chain)[i].meta, o_.model);
  if (local.ok()) local = check(chain->back().meta);
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  for (const ckpt::ChainLink& link : *chain) {
    if (!local.ok()) break;
    std::vector<uint64_t> deleted;  // an increment's evictions go before its rows
    local = ckpt::LoadOwnedDeleted(link.path, link.meta, comm_->rank(), comm_->size(), &deleted);
    if (local.ok()) local = server->EraseStored(deleted.data(), deleted.size());
    if (!local.ok()) break;
    local = ckpt::LoadOwnedRows(link.path, link.meta, comm_->rank(), comm_->size(),
                                [server](const uint64_t* k, size_t n, const uint8_t* r) { return server->Load(k, n, r); });
  }
  const ckpt::CheckpointMeta& newest = chain->back().meta;
  if (local.ok() && server->admits()) {
    std::vector<uint64_t> keys;
    std::vector<uint8_t> counts;
    std::vector<uint32_t> last;
    local = ckpt::LoadOwnedPending(path, newest, comm_->rank(), comm_->size(), &keys, &counts, &last);
    if (local.ok()) server->LoadPending(keys.data(), counts.data(), last.data(), keys.size());
  }
  if (local.ok()) local = hbm->SetDenseState(newest.dense);
  return comm_->AgreeOn(local);
}

// Resuming continues the same run: the same W (the data position is per worker) and the
// same --train files read in the same stripes (the position counts their lines).
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
                                   "); its data position fits those files, split that way among the workers "
                                   "(--batch-size, --worker-input), only. To train its model on new input, start a "
                                   "new run with --init-from");
  }
  return Status::OK();
}

Status Checkpointer::Resume(ShardServer* server, HbmPs* hbm, TrainProgress* progress) {
  const std::string from = o_.resume == "LATEST" || o_.resume == "auto" ? o_.checkpoint_dir : o_.resume;
  std::vector<ckpt::ChainLink> chain;
  STRATA_RETURN_IF_ERROR(Load(from, "--resume", server, hbm, [this](const ckpt::CheckpointMeta& m) { return CheckSameRun(m); },
                              &chain));
  const ckpt::CheckpointMeta& meta = chain.back().meta;
  progress->passes = static_cast<int>(meta.progress.pass);
  progress->epoch = static_cast<int>(meta.progress.epoch);
  progress->examples = meta.progress.examples;
  progress->steps = meta.progress.global_step;
  progress->rows_evicted = meta.progress.rows_evicted;
  const size_t first = static_cast<size_t>(comm_->rank()) * o_.workers_per_rank;
  progress->local_lines.assign(meta.data_position.begin() + first,
                               meta.data_position.begin() + first + o_.workers_per_rank);
  last_export_pass_ = meta.progress.pass;
  std::error_code ec;
  if (enabled() && std::filesystem::equivalent(std::filesystem::path(chain.back().path).parent_path(),
                                               o_.checkpoint_dir, ec)) {  // later increments may build on it
    chain_pass_ = meta.progress.pass;
    chain_increments_ = static_cast<int>(chain.size()) - 1;
  }
  return Status::OK();
}

// The model and its counters carry over (pass numbers, steps and Adam's step count go on);
// the input starts at its first line, in epoch 0. Delta exports start with a full base.
Status Checkpointer::InitFrom(ShardServer* server, HbmPs* hbm, TrainProgress* progress) {
  std::vector<ckpt::ChainLink> chain;
  STRATA_RETURN_IF_ERROR(Load(o_.init_from, "--init-from", server, hbm,
                              [](const ckpt::CheckpointMeta&) { return Status::OK(); }, &chain));
  const ckpt::CheckpointMeta& meta = chain.back().meta;
  progress->passes = static_cast<int>(meta.progress.pass);
  progress->epoch = 0;
  progress->examples = meta.progress.examples;
  progress->steps = meta.progress.global_step;
  progress->local_lines.assign(o_.workers_per_rank, 0);
  return Status::OK();
}

}  // namespace strata
