// PassPipeline: the Read, Pull and Stage-in stages of the 4-stage pipeline, each on its own
// thread with its own communicator and bounded queues between them, so pass p+1 is read,
// pulled and staged while the Train stage (the caller of Next) trains pass p. At most
// --prefetch-passes passes are pulled ahead of the one training, and the Read stage runs one
// pass further, so the owners' caches learn each pass's keys a pass before its pull. With
// threads off, Next runs the three stages in sequence on the caller's thread (no announcing).
//
//   Read:     each local worker cuts up to steps-per-pass batches from its chunk; ranks agree
//             on the pass's step count and the malformed-row budget; epochs roll over here.
//             The pass's distinct keys go to their owners through PipelineHooks::announce.
//   Pull:     the distinct keys of the pass go to their owners, which serve rows through
//             PipelineHooks::serve (flagging rows an earlier, unfinished pass holds).
//   Stage-in: keys and rows are ordered by device shard, ready for HbmPs::Insert.
//
// Shutdown: every stage loop starts with an all-reduce of the stop flag on its own
// communicator, so all ranks leave each stage at the same pass and none is left waiting in
// a collective. A stage error is agreed across ranks and travels down as PassData::error.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <semaphore>
#include <thread>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/comm/param_exchange.h"
#include "strata/data/criteo_reader.h"
#include "strata/data/shard_plan.h"
#include "strata/train/options.h"
#include "train/bounded_queue.h"
#include "train/pass_data.h"

namespace strata {

// Owner side of a pull for `pass` (-1: a read-only pull that pins nothing).
using PassRowServer = std::function<Status(int pass, const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* flags)>;

// Owner side of an announcement: keys (n) will be pulled for `pass`.
using PassKeySink = std::function<Status(int pass, const uint64_t* keys, size_t n)>;

struct PipelineHooks {
  PassRowServer serve;                                      // called from the Pull stage's thread
  PassKeySink announce;                                     // Read stage's thread; empty: none
  std::function<void(const PassData& pass)> pulled;         // after a pass's pull, same thread
};

// Where reading starts: the first pass number, the epoch, and per local worker the lines
// of its chunk already consumed in that epoch (all zero for a fresh run).
struct ReadPosition {
  int pass = 0;
  int epoch = 0;
  std::vector<uint64_t> lines;
};

class PassPipeline {
 public:
  // Starts the stage threads (when threaded). REQUIRES: options and plan outlive this.
  static Status Start(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                      const PipelineHooks& hooks, const ReadPosition& from, bool threaded,
                      std::unique_ptr<PassPipeline>* out);
  ~PassPipeline();  // stops the stages (see Stop)

  // The next pass, ready to train; last set at the end of the data, error on a failure.
  PassData Next();

  // Asks the stages to finish and joins them. Every rank must call it (it is collective
  // through the stage communicators' stop agreement).
  void Stop();

 private:
  PassPipeline(const TrainOptions& options, const ShardPlan& plan, const PipelineHooks& hooks);
  Status OpenReaders(const ReadPosition& from);
  // announce_via: the exchange that announces the pass's keys, or null for none.
  void Read(Comm* comm, ParamExchange* announce_via, PassData* out);
  static void CollectKeys(PassData* pass);
  Status ReportBadRows(Comm* comm, int64_t total_bad);
  void Pull(Comm* comm, ParamExchange* exchange, PassData* pass);
  void StageIn(PassData* pass) const;
  bool AgreeStop(Comm* comm);
  void ReadLoop();
  void PullLoop();
  void StageLoop();

  const TrainOptions& o_;
  const ShardPlan& plan_;
  PipelineHooks hooks_;
  bool threaded_ = false;
  Comm* world_ = nullptr;
  std::unique_ptr<Comm> read_comm_, pull_comm_, stage_comm_;
  std::unique_ptr<ParamExchange> exchange_, read_exchange_;
  std::vector<std::unique_ptr<ChunkReader>> readers_;
  std::vector<size_t> warned_;  // bad-row messages already printed, per reader
  int next_pass_ = 0;
  int epoch_ = 0;
  bool done_ = false;
  std::atomic<bool> stop_{false};
  // Passes read (read_slots_: at most --prefetch-passes + 1) and pulled (pull_slots_: at
  // most --prefetch-passes) but not yet taken by Next. Read and Pull acquire a slot before
  // they start a pass; Next releases one of each when it hands a pass to training.
  std::counting_semaphore<1 << 20> read_slots_{0}, pull_slots_{0};
  std::unique_ptr<BoundedQueue<PassData>> read_q_, pull_q_, ready_q_;
  std::vector<std::thread> threads_;
};

}  // namespace strata
