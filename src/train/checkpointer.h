// Checkpointer: the trainer's side of checkpoints (files: strata/ckpt/). At a pass boundary
// every rank writes and fsyncs its rows, rank 0 writes the metadata and, after all ranks
// are done, publishes the checkpoint by switching LATEST; then the optional delta export
// (rows changed since the previous export, plus the dense model). With
// --checkpoint-incremental N, a checkpoint that follows one in --checkpoint-dir is an
// increment on it (only the rows trained since), except every Nth, which is full. Resume
// reads a published checkpoint (an increment with its chain of bases) on any number of
// ranks with the same W: every rank loads the rows it owns. All calls are collectives on
// the given Comm.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/ckpt/checkpoint.h"
#include "strata/comm/comm.h"
#include "strata/common/row.h"
#include "strata/common/stopwatch.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/ps/shard_server.h"
#include "strata/train/options.h"

namespace strata {

// Where training stands at a pass boundary.
struct TrainProgress {
  int passes = 0;                     // completed; the next pass's number
  int epoch = 0;                      // epoch of the next pass's data
  int64_t examples = 0, steps = 0;
  int64_t rows_evicted = 0;           // job-wide, since the model's first pass
  double loss_sum = 0;
  std::vector<uint64_t> local_lines;  // per local worker: chunk lines consumed in epoch
};

class Checkpointer {
 public:
  Checkpointer(const TrainOptions& options, Comm* comm) : o_(options), comm_(comm) {}

  bool enabled() const { return !o_.checkpoint_dir.empty(); }
  // Checkpoints may be increments (--checkpoint-incremental).
  bool incremental() const { return enabled() && o_.checkpoint_incremental > 1; }

  // Has server log what increments and deltas need: the keys it stores (increments read
  // those rows) and, with eviction, the keys it erases (increments and deltas list them).
  void Attach(ShardServer* server) const;

  // What the job trains on (DescribeInput of its --train plan): checkpoints record it and
  // resume refuses other input. Call before Write and Resume.
  void SetTrainInput(std::string description) { train_input_ = std::move(description); }

  // The schedule: after `passes` completed passes, whether a periodic checkpoint is due
  // (every --checkpoint-every-passes), and at the end whether the final one still is
  // (none was written after the last pass).
  bool PeriodicDue(int passes) const;
  bool FinalDue(int passes) const { return enabled() && last_written_ != passes; }

  // Writes and publishes the checkpoint of `progress`, then the delta export. The store
  // is read under the server's lock (concurrent pulls of prefetched passes wait).
  Status Write(const TrainProgress& progress, const HbmPs& hbm, ShardServer* server);

  // Whether this job resumes: always with --resume (LATEST) or --resume=PATH; with
  // --resume=auto when --checkpoint-dir holds a checkpoint (a requeued job continues, a
  // first one starts fresh). Without --resume a --checkpoint-dir that already holds a
  // checkpoint is an error: the run would overwrite the earlier run's checkpoints.
  Status ResumeWanted(bool* resume);

  // Loads --resume's checkpoint: rows this rank owns go to the server, the dense model
  // into hbm, and where training stands into *progress. Refuses a checkpoint of another
  // model (CheckCompatible), another W or other --train input.
  Status Resume(ShardServer* server, HbmPs* hbm, TrainProgress* progress);

  // Loads --init-from's model the same way, on any topology and input: *progress keeps
  // the checkpoint's pass, step and example counts, with the data position at the start.
  Status InitFrom(ShardServer* server, HbmPs* hbm, TrainProgress* progress);

 private:
  // One checkpoint or export to write: where, which rows, and on what base.
  struct Target {
    std::string dir, final_name;
    ckpt::Kind kind = ckpt::Kind::kFull;
    uint32_t min_last_pass = 0;  // rows with last_pass >= this (0: every row)
    int64_t base_pass = 0;       // an increment's or delta's base
    int keep = 0;                // retention in dir (0: keep all)
  };
  // The next checkpoint of --checkpoint-dir: an increment or a full one.
  Target NextCheckpoint(int passes) const;
  Status WriteOne(const Target& t, const TrainProgress& progress, const HbmPs& hbm, ShardServer* server);
  Status WriteAndPublish(const Target& t, const std::string& tmp, const TrainProgress& progress, const HbmPs& hbm,
                         ShardServer* server);
  Status WriteRows(const Target& t, const std::string& tmp, ShardServer* server, ckpt::RankFileInfo* info) const;
  Status WriteKeyFiles(const Target& t, const std::string& tmp, const TrainProgress& progress,
                       ShardServer* server) const;
  Status PublishOnRankZero(const Target& t, const std::string& tmp, const TrainProgress& progress, const HbmPs& hbm,
                           const std::vector<std::string>& all, const Stopwatch& watch);
  Status Load(const std::string& from, const char* flag, ShardServer* server, HbmPs* hbm,
              const std::function<Status(const ckpt::CheckpointMeta&)>& check, std::vector<ckpt::ChainLink>* chain);
  Status CheckSameRun(const ckpt::CheckpointMeta& meta) const;
  ckpt::CheckpointMeta MetaOf(const TrainProgress& progress, const Target& t) const;

  const TrainOptions& o_;
  Comm* comm_;
  std::string train_input_;
  int exports_ = 0;                // delta files written by this job
  int64_t last_export_pass_ = -1;  // passes completed at the previous export
  int last_written_ = -1;          // passes completed at the newest checkpoint of this job
  int64_t chain_pass_ = -1;        // the newest checkpoint in --checkpoint-dir an increment may build on
  int chain_increments_ = 0;       // increments on its full checkpoint, up to it
};

}  // namespace strata
