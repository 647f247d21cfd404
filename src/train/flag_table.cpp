// The flag table: every flag of strata-train declared once, with the field it sets, its
// parser and its bounds. Defaults are the TrainOptions/ModelSpec member initializers.
#include "flag_table.h"

#include <type_traits>
#include <utility>

#include "flag_values.h"
#include "strata/ps/admission.h"
#include "strata/ssd/ssd_store.h"

namespace strata {
namespace {

// The struct a field lives in: TrainOptions itself, its ModelSpec or the spec's LrSchedule.
template <typename Owner, typename Opts>
auto& PartOf(Opts& o) {
  if constexpr (std::is_same_v<Owner, ModelSpec>) {
    return o.model;
  } else if constexpr (std::is_same_v<Owner, LrSchedule>) {
    return o.model.schedule;
  } else {
    return o;
  }
}

FlagDef Flag(std::string_view name, std::string_view group, std::string_view value_name, std::string_view help) {
  FlagDef f;
  f.name = name;
  f.group = group;
  f.value_name = value_name;
  f.help = help;
  return f;
}

template <typename T, typename Owner>
FlagDef Number(FlagDef f, T Owner::*field, Interval bounds = {}) {
  f.integral = std::is_integral_v<T>;
  f.accepts = f.integral ? "integer" : "number";
  f.bounds = bounds;
  f.set = [name = f.name, field, bounds](std::string_view text, TrainOptions* o) {
    return ParseNumber(name, text, bounds, &(PartOf<Owner>(*o).*field));
  };
  f.get = [field](const TrainOptions& o) { return FormatNumber(PartOf<Owner>(o).*field); };
  return f;
}

// A flag of a few words, each standing for one value of the field.
template <typename T, typename Owner>
FlagDef Words(FlagDef f, T Owner::*field, std::vector<std::pair<std::string, T>> choices) {
  f.accepts = "word";
  for (const auto& c : choices) f.words.push_back(c.first);
  f.set = [name = f.name, field, choices, words = f.words](std::string_view text, TrainOptions* o) {
    size_t i = 0;
    STRATA_RETURN_IF_ERROR(ParseWord(name, text, words, &i));
    PartOf<Owner>(*o).*field = choices[i].second;
    return Status::OK();
  };
  f.get = [field, choices](const TrainOptions& o) {
    for (const auto& c : choices) {
      if (c.second == PartOf<Owner>(o).*field) return c.first;
    }
    return std::string("?");
  };
  return f;
}

FlagDef Text(FlagDef f, std::string TrainOptions::*field) {
  f.accepts = "text";
  f.set = [field, name = f.name](std::string_view text, TrainOptions* o) {
    if (text.empty()) return Status::InvalidArgument("--" + std::string(name) + " needs a value, got an empty one");
    o->*field = text;
    return Status::OK();
  };
  f.get = [field](const TrainOptions& o) { return o.*field; };
  return f;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

// Paths or globs; repeatable, comma-separated, empty items ignored.
FlagDef PathList(FlagDef f, std::vector<std::string> TrainOptions::*field) {
  f.accepts = "paths or globs";
  f.repeatable = true;
  f.set = [field](std::string_view text, TrainOptions* o) {
    for (std::string& item : SplitList(text)) {
      if (!item.empty()) (o->*field).push_back(std::move(item));
    }
    return Status::OK();
  };
  f.get = [field](const TrainOptions& o) { return JoinList(o.*field); };
  return f;
}

// The struct a list flag's field lives in: the model's or the run's options.
ModelSpec& OwnerOf(TrainOptions* o, ModelSpec*) { return o->model; }
TrainOptions& OwnerOf(TrainOptions* o, TrainOptions*) { return *o; }

template <typename Owner>
FlagDef IntList(FlagDef f, std::vector<int> Owner::*field, Interval item_bounds) {
  f.accepts = "integers";
  f.integral = true;
  f.bounds = item_bounds;
  f.set = [name = f.name, field, item_bounds](std::string_view text, TrainOptions* o) {
    return ParseIntList(name, text, item_bounds, &(OwnerOf(o, static_cast<Owner*>(nullptr)).*field));
  };
  f.get = [field](const TrainOptions& o) {
    std::vector<std::string> items;
    for (int v : OwnerOf(const_cast<TrainOptions*>(&o), static_cast<Owner*>(nullptr)).*field) {
      items.push_back(FormatNumber(v));
    }
    return JoinList(items);
  };
  return f;
}

FlagDef Special(FlagDef f, FlagKind kind, char short_name = 0) {
  f.kind = kind;
  f.short_name = short_name;
  f.accepts = f.value_name.empty() ? "" : "text";
  return f;
}

FlagDef Required(FlagDef f) {
  f.required = true;
  return f;
}

FlagDef Implicit(FlagDef f, std::string_view value) {
  f.implicit = value;
  return f;
}

// The table's sections, in --help order; each flag names its section.
std::vector<FlagDef> DataFlags() {
  using O = TrainOptions;
  const char* data = "Data";
  return {
      Required(PathList(Flag("train", data, "PATH...",
                             "training inputs: files, directories (their files, in name order, but for names "
                             "starting with . or _) or globs, plain, gzip or Parquet; repeat the flag or "
                             "comma-separate"),
                        &O::train)),
      PathList(Flag("eval", data, "PATH...", "evaluation inputs, as for --train; without them no evaluation runs"), &O::eval),
      Words(Flag("format", data, "WORD", "input format: criteo (TSV: label, 13 integers, 26 hex tokens; empty fields allowed) or parquet (Apache Parquet files, columns as --schema names them)"), &O::format, {{"criteo", "criteo"}, {"parquet", "parquet"}}),
      Text(Flag("schema", data, "FILE", "input layout from a schema file (CSV or TSV, header, column roles; see configs/*.schema), instead of --format"), &O::schema_file),
      Number(Flag("max-bad-rows", data, "N", "malformed rows tolerated (job-wide) before the run fails"), &O::max_bad_rows, AtLeast(0)),
      Words(Flag("worker-input", data, "WORD", "how the W workers share the training input: stripes (stripe k of --batch-size lines to worker k mod W, so a step trains on consecutive lines, in the input's order; each worker decompresses all of a gzip or Parquet file), parts (worker w reads the w-th of W contiguous parts: less decompression, but a step mixes rows from W distant places of the input, which costs AUC on a time-ordered log) or files (file k to worker k mod W, whole: each file is read by one worker, so each gzip or Parquet file is decompressed once; a step mixes W consecutive files; needs at least W files)"),
            &O::worker_input, {{"stripes", WorkerInput::kStripes}, {"parts", WorkerInput::kParts}, {"files", WorkerInput::kFiles}}),
  };
}

std::vector<FlagDef> ModelFlags() {
  using M = ModelSpec;
  const char* model = "Model";
  return {
      Words(Flag("model", model, "WORD", "the model above the pooled embeddings: dnn (the MLP), deepfm (the MLP's logit plus the factorization machine's second-order term over the slots' embeddings), dcn (DCN-v2 cross layers before the MLP) or dlrm (a bottom MLP of the dense features to the embedding width, then the pairwise dot products of all vectors into the MLP) or wdl (a wide weight a key, kept in its row, summed over the example's keys into the MLP's logit); every model on both backends"),
            &M::kind, {{"dnn", ModelKind::kDnn}, {"deepfm", ModelKind::kDeepFm}, {"dcn", ModelKind::kDcn}, {"dlrm", ModelKind::kDlrm}, {"wdl", ModelKind::kWdl}}),
      Number(Flag("cross-layers", model, "N", "dcn: cross layers"), &M::cross_layers, PositiveAtMost(kMaxCrossLayers)),
      IntList(Flag("bottom-mlp", model, "N,N,...", "dlrm: hidden widths of the dense features' MLP; its last layer, to --embedding-dim, is implied"), &M::bottom_mlp, Positive()),
      Number(Flag("cross-rank", model, "N", "dcn: rank of each cross layer's matrix, U (in, N) V (N, in); 0: full rank"), &M::cross_rank, AtLeast(0)),
      Number(Flag("embedding-dim", model, "N", "embedding width per slot (a schema with widths gives them instead; README: slots of several widths)"), &M::embedding_dim, PositiveAtMost(kMaxEmbeddingDim)),
      IntList(Flag("mlp", model, "N,N,...", "hidden layer widths; the output layer (1) is implied"), &M::mlp, Positive()),
      Words(Flag("sparse-optimizer", model, "WORD", "optimizer of the embedding rows"), &M::sparse_optimizer,
            {{"adagrad", SparseOptimizerKind::kAdagrad},
             {"rowwise-adagrad", SparseOptimizerKind::kRowwiseAdagrad},
             {"adam", SparseOptimizerKind::kAdam},
             {"ftrl", SparseOptimizerKind::kFtrl},
             {"sgd", SparseOptimizerKind::kSgd}}),
      Words(Flag("dense-optimizer", model, "WORD", "optimizer of the MLP"), &M::dense_optimizer,
            {{"adam", DenseOptimizerKind::kAdam}, {"sgd", DenseOptimizerKind::kSgd}}),
      Number(Flag("lr-sparse", model, "X", "sparse learning rate"), &M::lr_sparse, Positive()),
      Number(Flag("lr-dense", model, "X", "dense learning rate"), &M::lr_dense, Positive()),
      Number(Flag("warmup-steps", model, "N", "both rates rise linearly over the first N global steps"), &LrSchedule::warmup_steps, AtLeast(0)),
      Words(Flag("lr-decay", model, "WORD", "decay of both rates from --decay-start over --decay-steps to --end-lr"), &LrSchedule::decay,
            {{"none", LrDecay::kNone}, {"linear", LrDecay::kLinear}, {"cosine", LrDecay::kCosine}, {"polynomial", LrDecay::kPolynomial}}),
      Number(Flag("decay-start", model, "N", "global step the decay begins at"), &LrSchedule::decay_start, AtLeast(0)),
      Number(Flag("decay-steps", model, "N", "global steps the decay takes"), &LrSchedule::decay_steps, Positive()),
      Number(Flag("decay-power", model, "X", "exponent of the polynomial decay"), &LrSchedule::decay_power, Positive()),
      Number(Flag("end-lr", model, "X", "the rate the decay ends at, as a fraction of each base rate"), &LrSchedule::end_lr,
             Interval{0, false, 1, false}),
      Number(Flag("adagrad-init", model, "X", "initial Adagrad accumulator of a new row"), &M::adagrad_initial_accumulator, Positive()),
      Number(Flag("init-scale", model, "X", "new embeddings are uniform(-s, s) from (key, seed)"), &M::init_scale, AtLeast(0)),
      Number(Flag("ftrl-l1", model, "X", "FTRL: L1 strength (a weight with |z| <= l1 is exactly 0)"), &M::ftrl_l1, AtLeast(0)),
      Number(Flag("ftrl-l2", model, "X", "FTRL: L2 strength"), &M::ftrl_l2, AtLeast(0)),
      Number(Flag("ftrl-beta", model, "X", "FTRL: rate smoothing, lr / (beta + sqrt(n))"), &M::ftrl_beta, Positive()),
      Number(Flag("seed", model, "N", "seed of parameter initialisation"), &M::seed),
      Words(Flag("row-dtype", model, "WORD", "embedding type of stored rows (MEM-PS, SSD-PS, wire, checkpoints); bf16 and fp16 halve it, rounded to nearest even as rows leave the HBM-PS, which computes in fp32"),
            &M::row_dtype, {{"fp32", RowDtype::kFp32}, {"bf16", RowDtype::kBf16}, {"fp16", RowDtype::kFp16}}),
      Number(Flag("evict-unseen-passes", model, "N", "a row not seen for N passes leaves every tier at the end of the pass that makes N (it starts afresh if seen again); 0: never"),
             &M::evict_unseen_passes, AtLeast(0)),
      Number(Flag("admit-min-count", model, "N", "a key gets a row once N examples have held it (counted job-wide and exactly); until then its embedding is zero and it is not trained; 0: off"),
             &M::admit_min_count, Interval{0, false, kMaxAdmitMinCount, false}),
  };
}

std::vector<FlagDef> RunFlags() {
  using O = TrainOptions;
  const char* run = "Run";
  return {
      Words(Flag("device", run, "WORD", "compute backend; auto: cuda when a GPU is visible"), &O::device,
            {{"cpu", "cpu"}, {"cuda", "cuda"}, {"auto", "auto"}}),
      Number(Flag("workers-per-rank", run, "N", "G: workers per rank (GPUs, or virtual devices on the CPU backend)"), &O::workers_per_rank, Positive()),
      IntList(Flag("cuda-devices", run, "N,N,...", "CUDA devices of the rank's G workers, one each; a device named twice is shared by two workers (default: the local rank's share of the node's GPUs)"),
              &O::cuda_devices, AtLeast(0)),
      Words(Flag("collectives", run, "WORD", "how a training step's job-wide sums travel: nccl (the CUDA backend: the dense gradients summed on the GPUs, the sparse gradients' records between ranks over NCCL) or mpi (both through host memory over MPI); the same bits either way; auto: nccl on the CUDA backend"),
            &O::collectives, {{"nccl", "nccl"}, {"mpi", "mpi"}, {"auto", "auto"}}),
      Number(Flag("threads", run, "N", "CPU threads per rank; 0: cores / ranks on the node"), &O::threads, AtLeast(0)),
      Number(Flag("batch-size", run, "N", "examples per worker per step (the global batch is W x this)"), &O::batch_size, Positive()),
      Words(Flag("dense-precision", run, "WORD", "operands of the MLP's matrix products while training: bf16 (fp32 accumulation, weights and optimizer; where the CPU has AVX512-BF16 or AMX, else fp32 with a notice) or fp32; evaluation and prediction compute in fp32"),
            &O::dense_precision, {{"fp32", DensePrecision::kFp32}, {"bf16", DensePrecision::kBf16}}),
      Number(Flag("pass-examples", run, "N", "examples per pass across the job"), &O::pass_examples, Positive()),
      Number(Flag("epochs", run, "N", "passes over the training data"), &O::epochs, Positive()),
      Number(Flag("eval-every-passes", run, "N", "also evaluate every N passes (0: only at the end)"), &O::eval_every_passes, AtLeast(0)),
      Number(Flag("dram-limit-gb", run, "X", "DRAM a rank may plan for, in GB; 0: what its node has available (MemAvailable or the cgroup's limit, shared by the node's ranks)"), &O::dram_limit_gb, AtLeast(0)),
      Implicit(Words(Flag("dry-run", run, "WORD", "print the memory plan (HBM, DRAM, disk a rank, from the flags and the input's first two passes) and exit; --dry-run alone: on"), &O::dry_run,
                     {{"on", true}, {"off", false}}), "on"),
  };
}

std::vector<FlagDef> TierFlags() {
  using O = TrainOptions;
  const char* tiers = "Tiers and pipeline";
  return {
      Number(Flag("mem-cache-gb", tiers, "X", "MEM-PS DRAM budget per rank in GB (fractions allowed); 0: every row in DRAM, no SSD tier"), &O::mem_cache_gb, AtLeast(0)),
      Text(Flag("ssd-dir", tiers, "DIR", "SSD-PS files, in DIR/rank-<r>"), &O::ssd_dir),
      Number(Flag("ssd-compact-threshold", tiers, "X", "stale fraction of an SSD-PS segment that triggers its compaction"), &O::ssd_compact_threshold, kCompactThresholdRange),
      Number(Flag("ssd-segment-mb", tiers, "X", "SSD-PS segment file size in MiB; disk use stays within 2x the live records plus one segment per rank"), &O::ssd_segment_mb,
             Interval{0.0625, false, 4096, false}),
      Words(Flag("ssd-io", tiers, "WORD", "SSD-PS file I/O; direct: O_DIRECT, no page cache (faster when rows are rarely read back, slower when the page cache would hold them)"), &O::ssd_direct_io,
            {{"direct", true}, {"buffered", false}}),
      Number(Flag("prefetch-passes", tiers, "N", "passes pulled and staged ahead of training (the Read stage runs one further)"), &O::prefetch_passes, PositiveAtMost(kMaxPrefetchPasses)),
      Words(Flag("pipeline", tiers, "WORD", "on: the stages overlap; off: Read, Pull, Stage-in and Train run in sequence"), &O::pipeline,
            {{"on", true}, {"off", false}}),
  };
}

std::vector<FlagDef> CheckpointFlags() {
  using O = TrainOptions;
  const char* ckpt = "Checkpoints and output";
  return {
      Text(Flag("checkpoint-dir", ckpt, "DIR", "directory of checkpoints (one is written at the end)"), &O::checkpoint_dir),
      Number(Flag("checkpoint-every-passes", ckpt, "N", "also checkpoint every N passes (0: only at the end)"), &O::checkpoint_every_passes, AtLeast(0)),
      Number(Flag("keep-checkpoints", ckpt, "N", "checkpoints kept; older ones are deleted (unless a kept increment builds on them)"), &O::keep_checkpoints, Positive()),
      Number(Flag("checkpoint-incremental", ckpt, "N", "N > 1: a checkpoint holds only the rows trained since the previous one (an increment on it), except every Nth, which is full; 0 or 1: every checkpoint is full"),
             &O::checkpoint_incremental, AtLeast(0)),
      Implicit(Text(Flag("resume", ckpt, "PATH", "resume from LATEST of --checkpoint-dir (--resume alone), from the checkpoint PATH, or with --resume=auto from LATEST when there is one (a fresh start otherwise)"), &O::resume), "LATEST"),
      Text(Flag("init-from", ckpt, "PATH", "start from the model of a checkpoint (PATH, or LATEST of a checkpoint directory) on new input: rows, dense parameters and counters load, the data position starts over, so --train and ranks x workers may differ; with --resume=auto only when --checkpoint-dir holds no checkpoint yet"), &O::init_from),
      Text(Flag("export-delta-dir", ckpt, "DIR", "after each checkpoint, export the rows changed since the previous export"), &O::export_delta_dir),
      Text(Flag("metrics-out", ckpt, "FILE", "JSONL metrics: one record per pass, then a final record"), &O::metrics_out),
      Text(Flag("export-rows", ckpt, "DIR", "at the end, write every row as TSV to DIR/rows-<rank>.tsv"), &O::export_rows),
  };
}

std::vector<FlagDef> OtherFlags() {
  const char* other = "Other";
  return {
      Special(Flag("config", other, "FILE", "file of flags, one per line (flag value, flag = value or --flag=value; # starts a comment); the command line wins"), FlagKind::kConfig),
      Special(Flag("help", other, "", "print this help"), FlagKind::kHelp, 'h'),
      Special(Flag("help-markdown", other, "", "print the flag table as Markdown (the README's)"), FlagKind::kHelpMarkdown),
  };
}

std::vector<FlagDef> MakeTable() {
  std::vector<FlagDef> table;
  for (auto section : {DataFlags, ModelFlags, RunFlags, TierFlags, CheckpointFlags, OtherFlags}) {
    for (FlagDef& f : section()) table.push_back(std::move(f));
  }
  return table;
}

}  // namespace

const std::vector<FlagDef>& TrainFlags() {
  static const std::vector<FlagDef> table = MakeTable();
  return table;
}

const FlagDef* FindFlag(std::string_view name) {
  for (const FlagDef& f : TrainFlags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace strata
