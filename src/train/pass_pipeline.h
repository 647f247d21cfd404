// PassPipeline: the Read, Pull and Stage-in stages of the 4-stage pipeline, each on its own
// thread with its own communicator and bounded queues between them, so pass p+1 is read,
// pulled and staged while the Train stage (the caller of Next) trains pass p. At most
// --prefetch-passes passes are pulled ahead of the one training, and the Read stage runs one
// pass further, so the owners' caches learn each pass's keys a pass before its pull. With
// threads off, Next runs the three stages in sequence on the caller's thread (no announcing).
//
//   Read:     PassReader (train/pass_reader.h); the pass's distinct keys are announced to
//             their owners when they cache (ShardServer::caches). A training run from the
//             start first hands on the passes the memory plan's sample read (ReadAhead),
//             then reads on with the reader that read them.
//   Pull:     ParamExchange::Pull of the pass's keys: rows, held flags and routing.
//   Stage-in: the rows go into the HBM-PS standby tables (HbmPs::BeginStage, Stage) and are
//             freed once the pass is handed on. One pass is staged at a time: the next waits until the Train stage has
//             made the staged one active (SwapIn).
//
// An evaluation pipeline reads and pulls read-only (nothing pinned, held or routed) and
// stages nothing: its passes keep their keys and rows for the caller to load.
//
// Shutdown: every stage loop starts with an all-reduce of the stop flag on its own
// communicator, so all ranks leave each stage at the same pass and none is left waiting in
// a collective. A stage error is agreed across ranks and travels down as PassData::error.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/comm/param_exchange.h"
#include "strata/data/shard_plan.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/ps/shard_server.h"
#include "strata/train/options.h"
#include "train/bounded_queue.h"
#include "train/pass_data.h"
#include "train/pass_reader.h"

namespace strata {

class PassPipeline {
 public:
  // Starts a training pipeline (threaded: its stage threads). When training starts at the
  // beginning of its input and ahead holds passes read before (SampleKeys), the pipeline's
  // first passes are those and its reader theirs, and the standby tables' room for the
  // first is made here (HbmPs::ReserveStage), before training's clock starts, as a model's
  // tables are made before its first step; ahead is emptied either way. REQUIRES:
  // every argument outlives the pipeline; hbm's standby tables belong to the pipeline
  // until Stop.
  static Status StartTraining(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                              ShardServer* server, HbmPs* hbm, const ReadPosition& from, bool threaded,
                              ReadAhead* ahead, std::unique_ptr<PassPipeline>* out);
  // Starts an evaluation pipeline over plan (one epoch, no threads).
  static Status StartEvaluation(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                                ShardServer* server, std::unique_ptr<PassPipeline>* out);
  ~PassPipeline();  // stops the stages (see Stop)

  // The next pass: staged in the standby tables (training) or with its rows (evaluation);
  // last set at the end of the data, error on a failure.
  PassData Next();

  // Training: the pass Next returned becomes active (HbmPs::SwapIn), and the standby
  // tables are free for the next pass's Stage-in.
  Status SwapIn();

  // Asks the stages to finish and joins them. Every rank must call it (it is collective
  // through the stage communicators' stop agreement).
  void Stop();

  // After Stop: the bytes this rank's stages sent over MPI, and their share of the lower
  // bound (ParamExchange::lower_bound_bytes).
  struct Wire {
    uint64_t sent = 0, lower_bound = 0;
  };
  Wire WireBytes() const;

 private:
  PassPipeline(const TrainOptions& options, Comm* world, ShardServer* server, HbmPs* hbm, bool threaded);
  // A reader of plan over o_, opened at `from` (agreed on).
  Status OpenReader(const ShardPlan& plan, const ReadPosition& from);
  Status StartThreads();
  void Read(Comm* comm, ParamExchange* announce_via, PassData* out);
  void Pull(Comm* comm, ParamExchange* exchange, PassData* pass);
  // Stages the pass's rows into the standby tables and returns them, spent: the caller
  // recycles them (ParamExchange::Recycle) once it has handed the pass on, so that
  // training need not wait for it.
  PulledRows StageIn(Comm* comm, PassData* pass);
  bool AgreeStop(Comm* comm);
  void ReadLoop();
  void PullLoop();
  void StageLoop();

  const TrainOptions o_;  // a copy: evaluation reads one epoch
  Comm* world_;
  ShardServer* server_;
  HbmPs* hbm_;  // null for evaluation
  std::unique_ptr<PassReader> reader_;
  std::deque<PassData> read_ahead_;  // passes read before the pipeline started, for Read to hand on
  bool threaded_ = false;
  std::unique_ptr<Comm> read_comm_, pull_comm_, stage_comm_;
  std::unique_ptr<ParamExchange> exchange_, read_exchange_;
  std::atomic<bool> stop_{false};
  // Passes read (read_slots_: at most --prefetch-passes + 1) and pulled (pull_slots_: at
  // most --prefetch-passes) but not yet taken by Next. Read and Pull acquire a slot before
  // they start a pass; Next releases one of each when it hands a pass to training. The
  // standby tables (standby_free_) are taken by Stage-in and given back by SwapIn.
  std::counting_semaphore<1 << 20> read_slots_{0}, pull_slots_{0}, standby_free_{1};
  std::unique_ptr<BoundedQueue<PassData>> read_q_, pull_q_, ready_q_;
  // The keys of each pass Pull starts, for Stage-in to make room for them meanwhile.
  std::unique_ptr<BoundedQueue<size_t>> room_q_;
  std::vector<std::thread> threads_;
};

}  // namespace strata
