// TrainOptions: every knob of strata-train in one place, each default with its reason.
// The member initializers are the flags' defaults: the flag table (src/train/flag_table.h)
// declares each flag once (name, help, field, parser, bounds) and prints these defaults in
// --help and the README. ParseTrainOptions reads the command line and an optional --config
// file of the same flags (one per line, `#` comments; the command line wins) and validates
// them; any problem is an InvalidArgument naming the flag (main exits with status 2).
// Plain data; ParseTrainOptions is thread-safe (it touches only *out).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/common/status.h"
#include "strata/data/schema.h"
#include "strata/model/gemm.h"
#include "strata/model/model_spec.h"
#include "strata/ssd/ssd_store.h"

namespace strata {

// How the W workers share the training input (--worker-input): stripes of --batch-size
// lines dealt out in turn, one contiguous part a worker, or whole files dealt out in turn.
enum class WorkerInput { kStripes, kParts, kFiles };

// Passes the pipeline may pull ahead of training (the MEM-PS pins them all at once).
constexpr int kMaxPrefetchPasses = 16;

struct TrainOptions {
  // Data.
  std::vector<std::string> train;   // files or globs, plain or .gz
  std::vector<std::string> eval;    // files or globs; empty: no evaluation
  std::string format = "criteo";    // the built-in layout, unless --schema names one
  std::string schema_file;          // --schema: the input layout from a schema file
  int64_t max_bad_rows = 100;       // a few bad rows are normal in logs; many mean a wrong file
  WorkerInput worker_input = WorkerInput::kStripes;  // --worker-input (strata/data/shard_plan.h)
  bool score_every_row = false;     // strata-predict (max_bad_rows 0): a malformed row is an
                                    // error, not a skipped row, as its output has a line a row
  // Run.
  std::string program = "strata-train";  // the tool running the job: its messages start with it
  std::string device = "cpu";       // cpu | cuda | auto (cuda when a GPU is visible)
  int workers_per_rank = 1;         // G: GPUs, or virtual devices on the CPU backend
  std::vector<int> cuda_devices;    // each worker's CUDA device; empty: CudaDevicesFor chooses
  std::string collectives = "auto";  // a step's sums: nccl | mpi | auto (nccl on the CUDA backend)
  int threads = 0;                  // 0: cores of this node / ranks of this node
  int batch_size = 1024;            // per worker; the global batch is W x this
  DensePrecision dense_precision = DensePrecision::kFp32;  // the MLP's products while training
  int64_t pass_examples = 262144;   // examples per pass across the job (AIBox's pass)
  int epochs = 1;
  int eval_every_passes = 0;        // 0: evaluate only at the end
  bool dry_run = false;             // print the memory plan and stop (train/memory_plan.h)
  double dram_limit_gb = 0;         // DRAM the plan may use a rank; 0: what the node has
  // Tiers and pipeline.
  double mem_cache_gb = 0;          // MEM-PS budget per rank; 0: all rows in DRAM, no SSD tier
  std::string ssd_dir = "strata-ssd";  // SSD-PS files, one subfolder per rank
  double ssd_compact_threshold = SsdOptions().compact_threshold;  // stale fraction that triggers compaction
  bool ssd_direct_io = false;       // --ssd-io direct: O_DIRECT, no page cache
  double ssd_segment_mb = 64;       // SSD-PS segment file size in MiB; the disk bound is
                                    // 2x live rows plus one segment
  int prefetch_passes = 1;          // passes pulled/staged ahead of training, <= kMaxPrefetchPasses
  bool pipeline = true;             // false: the stages run in sequence (for comparison)
  // Checkpoints.
  std::string checkpoint_dir;       // empty: no checkpoints
  int checkpoint_every_passes = 0;  // 0: only at the end
  int keep_checkpoints = 3;         // older ones are deleted once a newer one is published
  int checkpoint_incremental = 0;   // > 1: increments between full checkpoints, a full one every N
  std::string resume;               // "LATEST" (of --checkpoint-dir) or a checkpoint path
  std::string init_from;            // a checkpoint whose model starts this run on new input
  std::string export_delta_dir;     // delta exports for serving after each checkpoint
  std::string metrics_out;          // JSONL file; empty: none
  std::string export_rows;          // directory for rows-<rank>.tsv at the end; empty: none
  ModelSpec model;
  // Not flags: filled by the parser.
  bool show_help = false;
  std::string help_text;
  std::string command_line;         // the effective flags, for logs and checkpoints
  InputSchema input = CriteoSchema();  // from --schema, else --format; sets model's slots and dense

  bool operator==(const TrainOptions&) const = default;
};

// Resets *out to the defaults, then reads argv (argv[0] is the program) and the --config
// file it names. -h/--help and --help-markdown set show_help and help_text and stop there.
Status ParseTrainOptions(int argc, const char* const* argv, TrainOptions* out);

// CPU threads of one rank: --threads, else this node's cores shared by its local_ranks.
int ThreadsOfRank(const TrainOptions& o, int local_ranks);

}  // namespace strata
