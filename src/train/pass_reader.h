// PassReader: the Read stage of the pipeline. Each local worker cuts up to steps-per-pass
// batches from its chunk of the shard plan; ranks agree on the pass's step count (the most
// batches any worker read) and on the malformed-row budget; an epoch whose chunks are all
// exhausted rolls over to the next, and after the last epoch a pass with last set ends the
// stream. Rows are parsed on threads of the reader's own (at most the rank's --threads):
// several local workers' chunks side by side, or one worker's rows in groups
// (ChunkReader::NextBatches); the batches are the same whatever the threads. Every call is a collective on the Comm it is given. Not
// thread-safe: one caller thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/data/chunk_reader.h"
#include "strata/common/thread_pool.h"
#include "strata/data/shard_plan.h"
#include "strata/train/options.h"
#include "train/pass_data.h"

namespace strata {

// Where reading starts: the first pass number, the epoch, and per local worker the lines
// of its chunk already consumed in that epoch (all zero for a fresh run).
struct ReadPosition {
  int pass = 0;
  int epoch = 0;
  std::vector<uint64_t> lines;
};

class PassReader {
 public:
  // REQUIRES: options and plan outlive the reader.
  PassReader(const TrainOptions& options, const ShardPlan& plan, int rank);

  // Opens this rank's chunk readers at `from`. Local: the caller agrees on the result.
  Status Open(const ReadPosition& from);

  // The next pass into *out: batches, lines_after, keys (distinct, sorted), pass, epoch,
  // steps, read_s; or last, or error (agreed across ranks). After either, no more passes.
  void Read(Comm* comm, PassData* out);

 private:
  // Reads up to steps_per_pass batches per local worker on the pool's threads; counts[0] =
  // most batches of a worker, counts[1] = the rank's bad rows so far.
  Status ReadBatches(int64_t steps_per_pass, PassData* out, int64_t counts[2]);
  Status ReportBadRows(Comm* comm, int64_t total_bad);
  void CollectKeys(PassData* pass) const;
  static void AppendOncePerExample(const Batch& b, std::vector<uint64_t>* out);

  const TrainOptions& o_;
  const ShardPlan& plan_;
  const int rank_;
  std::vector<std::unique_ptr<ChunkReader>> readers_;
  // Threads of the Read stage (the rank's threads, at most kMaxReadThreads): the workers'
  // chunks and the buckets of the key sort run on them. Null when one; made at the first Read.
  static constexpr int kMaxReadThreads = 8;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<size_t> warned_;  // bad-row messages already printed, per reader
  int next_pass_ = 0;
  int epoch_ = 0;
  bool done_ = false;
};

// Passes read before the training pipeline starts (the memory plan's key sample reads the
// first two) and the reader that read them, so that training goes on from where it stopped
// instead of reading them again (PassPipeline::StartTraining).
struct ReadAhead {
  std::unique_ptr<PassReader> reader;  // null: nothing was read ahead
  std::vector<PassData> passes;        // in order; the last may be the end of the input
};

}  // namespace strata
