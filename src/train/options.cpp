// Flag parsing with cxxopts, the --config file merge, and cross-flag validation.
#include "strata/train/options.h"

#include <cxxopts.hpp>
#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace strata {
namespace {

std::string fmt_float(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

cxxopts::Options MakeSpec(const TrainOptions& d) {
  cxxopts::Options o("strata-train", "Strata: hierarchical parameter server for CTR models (run under mpirun)");
  const ModelSpec& m = d.model;
  o.add_options("Data")
      ("train", "training inputs: files or globs, plain or .gz (repeat or comma-separate)", cxxopts::value<std::vector<std::string>>())
      ("eval", "evaluation inputs: files or globs, plain or .gz", cxxopts::value<std::vector<std::string>>())
      ("format", "input format", cxxopts::value<std::string>()->default_value(d.format))
      ("max-bad-rows", "malformed rows tolerated before the run fails", cxxopts::value<std::string>()->default_value(std::to_string(d.max_bad_rows)));
  o.add_options("Model")
      ("embedding-dim", "embedding width per slot", cxxopts::value<std::string>()->default_value(std::to_string(m.embedding_dim)))
      ("mlp", "hidden layer widths, comma-separated", cxxopts::value<std::string>()->default_value("512,256,128"))
      ("sparse-optimizer", "adagrad | sgd", cxxopts::value<std::string>()->default_value("adagrad"))
      ("dense-optimizer", "adam | sgd", cxxopts::value<std::string>()->default_value("adam"))
      ("lr-sparse", "sparse learning rate", cxxopts::value<std::string>()->default_value("0.05"))
      ("lr-dense", "dense learning rate", cxxopts::value<std::string>()->default_value("0.001"))
      ("adagrad-init", "initial Adagrad accumulator of a new row", cxxopts::value<std::string>()->default_value(fmt_float(m.adagrad_initial_accumulator)))
      ("init-scale", "new embeddings are uniform(-s, s)", cxxopts::value<std::string>()->default_value(fmt_float(m.init_scale)))
      ("seed", "seed of parameter initialisation", cxxopts::value<std::string>()->default_value(std::to_string(m.seed)));
  o.add_options("Run")
      ("device", "cpu | cuda | auto", cxxopts::value<std::string>()->default_value(d.device))
      ("workers-per-rank", "workers (devices) per rank", cxxopts::value<std::string>()->default_value(std::to_string(d.workers_per_rank)))
      ("threads", "CPU threads per rank (0: cores / ranks on the node)", cxxopts::value<std::string>()->default_value(std::to_string(d.threads)))
      ("batch-size", "examples per worker per step", cxxopts::value<std::string>()->default_value(std::to_string(d.batch_size)))
      ("pass-examples", "examples per pass across the job", cxxopts::value<std::string>()->default_value(std::to_string(d.pass_examples)))
      ("epochs", "passes over the training data", cxxopts::value<std::string>()->default_value(std::to_string(d.epochs)))
      ("eval-every-passes", "evaluate every N passes (0: only at the end)", cxxopts::value<std::string>()->default_value(std::to_string(d.eval_every_passes)))
      ("mem-cache-gb", "MEM-PS DRAM budget per rank in GB (fractions allowed); 0: every row in DRAM, no SSD tier", cxxopts::value<std::string>()->default_value("0"))
      ("ssd-dir", "directory of the SSD-PS files (one subfolder per rank)", cxxopts::value<std::string>()->default_value(d.ssd_dir))
      ("ssd-compact-threshold", "stale fraction of an SSD-PS segment that triggers its compaction", cxxopts::value<std::string>()->default_value("0.5"))
      ("prefetch-passes", "passes pulled and staged ahead of training (the Read stage runs one further)", cxxopts::value<std::string>()->default_value(std::to_string(d.prefetch_passes)))
      ("ssd-io", "SSD-PS file I/O: buffered (through the page cache) or direct (O_DIRECT)", cxxopts::value<std::string>()->default_value("buffered"))
      ("ssd-segment-mb", "SSD-PS segment file size in MiB (disk use stays within 2x the live rows plus one segment)", cxxopts::value<std::string>()->default_value("64"))
      ("pipeline", "on: the stages overlap; off: they run in sequence", cxxopts::value<std::string>()->default_value("on"))
      ("checkpoint-dir", "directory of checkpoints (one is written at the end)", cxxopts::value<std::string>()->default_value(""))
      ("checkpoint-every-passes", "also checkpoint every N passes (0: only at the end)", cxxopts::value<std::string>()->default_value("0"))
      ("keep-checkpoints", "checkpoints kept; older ones are deleted", cxxopts::value<std::string>()->default_value(std::to_string(d.keep_checkpoints)))
      ("resume", "resume: --resume for the LATEST of --checkpoint-dir, or --resume=PATH", cxxopts::value<std::string>()->implicit_value("LATEST"))
      ("export-delta-dir", "after each checkpoint, export the rows changed since the previous export", cxxopts::value<std::string>()->default_value(""))
      ("metrics-out", "JSONL metrics file", cxxopts::value<std::string>()->default_value(""))
      ("export-rows", "at the end, write every row as TSV to DIR/rows-<rank>.tsv", cxxopts::value<std::string>()->default_value(""))
      ("config", "file of flags, one per line, # comments; the command line wins", cxxopts::value<std::string>())
      ("h,help", "print this help");
  return o;
}

// Reads a config file into argv-style tokens, skipping flags the command line set.
Status ReadConfig(const std::string& path, const std::set<std::string>& known,
                  const std::set<std::string>& from_cli, std::vector<std::string>* tokens) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--config: cannot open " + path);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, value;
    if (!(words >> key)) continue;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.resize(eq);
    }
    std::string rest;
    while (words >> rest) {
      if (rest == "=") continue;
      value += value.empty() ? rest : "," + rest;
    }
    if (key.rfind("--", 0) == 0) key = key.substr(2);
    const std::string where = path + ":" + std::to_string(lineno);
    if (!known.count(key) || key == "config" || key == "help") {
      return Status::InvalidArgument("--config " + where + ": unknown flag --" + key);
    }
    if (from_cli.count(key)) continue;
    if (value.empty()) return Status::InvalidArgument("--config " + where + ": --" + key + " needs a value");
    tokens->push_back("--" + key + "=" + value);
  }
  return Status::OK();
}

// Typed reads of string-valued flags, so a bad value names its flag.
class FlagReader {
 public:
  explicit FlagReader(const cxxopts::ParseResult& r) : r_(r) {}

  std::string Str(const std::string& flag) const { return r_[flag].as<std::string>(); }

  template <typename T>
  Status Number(const std::string& flag, T* out) const {
    const std::string text = Str(flag);
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    if (ec != std::errc() || ptr != end || text.empty()) {
      return Status::InvalidArgument("--" + flag + ": '" + text + "' is not a valid number");
    }
    return Status::OK();
  }

  // A flag with two words: *out = (value == yes).
  Status TwoWay(const std::string& flag, const std::string& yes, const std::string& no, bool* out) const {
    const std::string text = Str(flag);
    if (text != yes && text != no) return Status::InvalidArgument("--" + flag + ": '" + text + "' is not " + yes + " or " + no);
    *out = text == yes;
    return Status::OK();
  }

  Status IntList(const std::string& flag, std::vector<int>* out) const {
    out->clear();
    std::stringstream in(Str(flag));
    std::string item;
    while (std::getline(in, item, ',')) {
      int v = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || ptr != item.data() + item.size() || item.empty()) {
        return Status::InvalidArgument("--" + flag + ": '" + Str(flag) + "' is not a comma-separated list of integers");
      }
      out->push_back(v);
    }
    return Status::OK();
  }

 private:
  const cxxopts::ParseResult& r_;
};

template <typename T>
Status Positive(const std::string& flag, T v) {
  if (v <= 0) return Status::InvalidArgument("--" + flag + " must be positive, got " + std::to_string(v));
  return Status::OK();
}

Status Validate(TrainOptions* o) {
  STRATA_RETURN_IF_ERROR(Positive("workers-per-rank", o->workers_per_rank));
  STRATA_RETURN_IF_ERROR(Positive("batch-size", o->batch_size));
  STRATA_RETURN_IF_ERROR(Positive("pass-examples", o->pass_examples));
  STRATA_RETURN_IF_ERROR(Positive("epochs", o->epochs));
  STRATA_RETURN_IF_ERROR(Positive("embedding-dim", o->model.embedding_dim));
  STRATA_RETURN_IF_ERROR(Positive("lr-sparse", o->model.lr_sparse));
  STRATA_RETURN_IF_ERROR(Positive("lr-dense", o->model.lr_dense));
  STRATA_RETURN_IF_ERROR(Positive("adagrad-init", o->model.adagrad_initial_accumulator));
  if (o->model.init_scale < 0) return Status::InvalidArgument("--init-scale must be >= 0");
  if (o->threads < 0) return Status::InvalidArgument("--threads must be >= 0, got " + std::to_string(o->threads));
  if (o->max_bad_rows < 0) return Status::InvalidArgument("--max-bad-rows must be >= 0");
  if (o->mem_cache_gb < 0) return Status::InvalidArgument("--mem-cache-gb must be >= 0");
  if (!(o->ssd_compact_threshold > 0 && o->ssd_compact_threshold < 1)) {
    return Status::InvalidArgument("--ssd-compact-threshold must be in (0, 1)");
  }
  if (!(o->ssd_segment_mb >= 0.0625 && o->ssd_segment_mb <= 4096)) {
    return Status::InvalidArgument(fmt::format("--ssd-segment-mb must be in [0.0625, 4096], got {}", o->ssd_segment_mb));
  }
  STRATA_RETURN_IF_ERROR(Positive("prefetch-passes", o->prefetch_passes));
  // The passes pinned at once (training, pulled ahead, read ahead) must fit the MEM-PS pin
  // window (strata/mem/cache_policy.h).
  if (o->prefetch_passes > kMaxPrefetchPasses) {
    return Status::InvalidArgument(fmt::format("--prefetch-passes must be at most {}, got {}", kMaxPrefetchPasses,
                                               o->prefetch_passes));
  }
  if (o->checkpoint_every_passes < 0) return Status::InvalidArgument("--checkpoint-every-passes must be >= 0");
  STRATA_RETURN_IF_ERROR(Positive("keep-checkpoints", o->keep_checkpoints));
  if (!o->export_delta_dir.empty() && o->checkpoint_dir.empty()) {
    return Status::InvalidArgument("--export-delta-dir needs --checkpoint-dir (deltas follow checkpoints)");
  }
  if (o->resume == "LATEST" && o->checkpoint_dir.empty()) {
    return Status::InvalidArgument("--resume without a path needs --checkpoint-dir");
  }
  if (o->eval_every_passes < 0) return Status::InvalidArgument("--eval-every-passes must be >= 0");
  if (o->model.embedding_dim > 1024) return Status::InvalidArgument("--embedding-dim must be at most 1024");
  for (int w : o->model.mlp) {
    if (w <= 0) return Status::InvalidArgument("--mlp widths must be positive, got " + std::to_string(w));
  }
  if (o->format != "criteo") return Status::InvalidArgument("--format: unknown format '" + o->format + "' (supported: criteo)");
  if (o->device != "cpu" && o->device != "cuda" && o->device != "auto") {
    return Status::InvalidArgument("--device: unknown device '" + o->device + "' (cpu, cuda, auto)");
  }
  if (o->train.empty()) return Status::InvalidArgument("--train is required");
  return Status::OK();
}

}  // namespace

Status ParseTrainOptions(int argc, const char* const* argv, TrainOptions* out) {
  TrainOptions& o = *out;
  cxxopts::Options spec = MakeSpec(o);
  o.help_text = spec.help();
  std::set<std::string> known;
  for (const auto& group : spec.groups()) {
    for (const auto& opt : spec.group_help(group).options) known.insert(opt.l.empty() ? opt.s : opt.l.front());
  }
  try {
    std::vector<std::string> tokens(argv + 1, argv + argc);
    {
      cxxopts::Options cli_spec = MakeSpec(o);
      cli_spec.allow_unrecognised_options();
      auto cli = cli_spec.parse(argc, argv);
      if (!cli.unmatched().empty()) {
        return Status::InvalidArgument("unknown flag or stray argument '" + cli.unmatched().front() + "' (see --help)");
      }
      if (cli.count("help")) {
        o.show_help = true;
        return Status::OK();
      }
      if (cli.count("config")) {
        std::set<std::string> from_cli;
        for (const auto& kv : cli.arguments()) from_cli.insert(kv.key());
        std::vector<std::string> config_tokens;
        STRATA_RETURN_IF_ERROR(ReadConfig(cli["config"].as<std::string>(), known, from_cli, &config_tokens));
        tokens.insert(tokens.begin(), config_tokens.begin(), config_tokens.end());
      }
    }
    std::vector<const char*> args = {argv[0]};
    for (const std::string& t : tokens) args.push_back(t.c_str());
    auto r = spec.parse(static_cast<int>(args.size()), args.data());
    o.command_line.clear();
    for (const std::string& t : tokens) o.command_line += (o.command_line.empty() ? "" : " ") + t;
    if (r.count("train")) o.train = r["train"].as<std::vector<std::string>>();
    if (r.count("eval")) o.eval = r["eval"].as<std::vector<std::string>>();
    const FlagReader f(r);
    ModelSpec& m = o.model;
    o.format = f.Str("format");
    o.device = f.Str("device");
    o.metrics_out = f.Str("metrics-out");
    o.export_rows = f.Str("export-rows");
    o.checkpoint_dir = f.Str("checkpoint-dir");
    o.export_delta_dir = f.Str("export-delta-dir");
    if (r.count("resume")) o.resume = f.Str("resume");
    STRATA_RETURN_IF_ERROR(f.Number("checkpoint-every-passes", &o.checkpoint_every_passes));
    STRATA_RETURN_IF_ERROR(f.Number("keep-checkpoints", &o.keep_checkpoints));
    o.ssd_dir = f.Str("ssd-dir");
    STRATA_RETURN_IF_ERROR(f.Number("mem-cache-gb", &o.mem_cache_gb));
    STRATA_RETURN_IF_ERROR(f.Number("ssd-compact-threshold", &o.ssd_compact_threshold));
    STRATA_RETURN_IF_ERROR(f.Number("prefetch-passes", &o.prefetch_passes));
    STRATA_RETURN_IF_ERROR(f.TwoWay("pipeline", "on", "off", &o.pipeline));
    STRATA_RETURN_IF_ERROR(f.TwoWay("ssd-io", "direct", "buffered", &o.ssd_direct_io));
    STRATA_RETURN_IF_ERROR(f.Number("ssd-segment-mb", &o.ssd_segment_mb));
    STRATA_RETURN_IF_ERROR(f.Number("max-bad-rows", &o.max_bad_rows));
    STRATA_RETURN_IF_ERROR(f.Number("workers-per-rank", &o.workers_per_rank));
    STRATA_RETURN_IF_ERROR(f.Number("threads", &o.threads));
    STRATA_RETURN_IF_ERROR(f.Number("batch-size", &o.batch_size));
    STRATA_RETURN_IF_ERROR(f.Number("pass-examples", &o.pass_examples));
    STRATA_RETURN_IF_ERROR(f.Number("epochs", &o.epochs));
    STRATA_RETURN_IF_ERROR(f.Number("eval-every-passes", &o.eval_every_passes));
    STRATA_RETURN_IF_ERROR(f.Number("embedding-dim", &m.embedding_dim));
    STRATA_RETURN_IF_ERROR(f.IntList("mlp", &m.mlp));
    STRATA_RETURN_IF_ERROR(f.Number("lr-sparse", &m.lr_sparse));
    STRATA_RETURN_IF_ERROR(f.Number("lr-dense", &m.lr_dense));
    STRATA_RETURN_IF_ERROR(f.Number("seed", &m.seed));
    STRATA_RETURN_IF_ERROR(f.Number("adagrad-init", &m.adagrad_initial_accumulator));
    STRATA_RETURN_IF_ERROR(f.Number("init-scale", &m.init_scale));
    const std::string sparse = f.Str("sparse-optimizer");
    if (sparse == "adagrad") m.sparse_optimizer = SparseOptimizerKind::kAdagrad;
    else if (sparse == "sgd") m.sparse_optimizer = SparseOptimizerKind::kSgd;
    else return Status::InvalidArgument("--sparse-optimizer: unknown '" + sparse + "' (adagrad, sgd)");
    const std::string dense = f.Str("dense-optimizer");
    if (dense == "adam") m.dense_optimizer = DenseOptimizerKind::kAdam;
    else if (dense == "sgd") m.dense_optimizer = DenseOptimizerKind::kSgd;
    else return Status::InvalidArgument("--dense-optimizer: unknown '" + dense + "' (adam, sgd)");
  } catch (const cxxopts::exceptions::exception& e) {
    return Status::InvalidArgument(e.what());
  }
  return Validate(&o);
}

}  // namespace strata
