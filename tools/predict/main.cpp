// strata-predict: scores input files with a checkpoint's model.
//   strata-predict --checkpoint DIR --input PATH... [--schema FILE | --format criteo] --out FILE
// DIR is a checkpoint, or a checkpoint directory (its LATEST). One process needs no mpirun;
// under mpirun the input is sharded over the ranks. The input is cut into the batches the
// trainer's evaluation cuts (the checkpoint's workers W and batch size, whatever the ranks,
// W divisible by them), so the probabilities are bitwise the trainer's eval predictions from
// the same checkpoint. Writes one probability per input row, in input order, to FILE (TSV:
// one number a line; a header line and blank lines are not rows; a malformed row is an
// error, so lines and rows stay aligned), and prints AUC and logloss over the labels. With
// --unlabeled the files lack the layout's label column (Criteo's test set): no metrics.
// Exit status: 0 done, 1 an error (reported once), 2 a bad flag.
#include <cxxopts.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <sstream>

#include "../common/cli.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/comm/comm.h"
#include "train/checkpointer.h"
#include "train/evaluator.h"
#include "train/fatal_error.h"
#include "train/job_setup.h"

namespace strata {
namespace {

struct PredictArgs {
  std::string checkpoint, out, schema, format = "criteo";
  std::vector<std::string> inputs;
  int batch_size = 0;  // 0: the checkpoint's
  int threads = 0;
  bool unlabeled = false;
};

[[noreturn]] void BadFlag(const std::string& message) { tools::BadFlag("strata-predict", message); }

PredictArgs ParseArgs(int argc, char** argv) {
  cxxopts::Options options("strata-predict", "Scores input files with a checkpoint's model.");
  options.add_options()
      ("checkpoint", "a checkpoint, or a checkpoint directory (its LATEST)", cxxopts::value<std::string>())
      ("input", "input files, directories or globs (plain, gzip or Parquet), comma-separated or repeated",
       cxxopts::value<std::vector<std::string>>())
      ("schema", "input layout from a schema file (default: the training run's)", cxxopts::value<std::string>())
      ("format", "criteo (the built-in layout) or parquet (Parquet files, columns as the schema names them)", cxxopts::value<std::string>())
      ("out", "output file: one probability per input row", cxxopts::value<std::string>())
      ("batch-size", "examples per batch (default: the training run's)", cxxopts::value<int>())
      ("threads", "CPU threads per rank; 0: cores / ranks on the node", cxxopts::value<int>()->default_value("0"))
      ("unlabeled", "the input has no label column (the layout's other columns, in order)")
      ("h,help", "print this help");
  const cxxopts::ParseResult r = tools::ParseFlagsOrExit(options, argc, argv, "strata-predict");
  for (const char* required : {"checkpoint", "input", "out"}) {
    if (!r.count(required)) BadFlag(fmt::format("--{} is required", required));
  }
  PredictArgs a;
  a.checkpoint = r["checkpoint"].as<std::string>();
  a.inputs = r["input"].as<std::vector<std::string>>();
  a.out = r["out"].as<std::string>();
  if (r.count("schema")) a.schema = r["schema"].as<std::string>();
  if (r.count("format")) a.format = r["format"].as<std::string>();
  if (a.format != "criteo" && a.format != "parquet") {
    BadFlag("--format: '" + a.format + "' is not criteo or parquet (use --schema FILE for other layouts)");
  }
  if (r.count("batch-size")) a.batch_size = r["batch-size"].as<int>();
  a.threads = r["threads"].as<int>();
  a.unlabeled = r.count("unlabeled") > 0;
  if (r.count("batch-size") && a.batch_size < 1) BadFlag("--batch-size must be positive");
  if (a.threads < 0) BadFlag("--threads must be at least 0");
  return a;
}

// The last value of --NAME in a checkpoint's recorded command line, or "".
std::string RecordedFlag(const std::string& flags, const std::string& name) {
  std::istringstream in(flags);
  std::string token, value;
  const std::string bare = "--" + name, assigned = bare + "=";
  while (in >> token) {
    if (token.rfind(assigned, 0) == 0) value = token.substr(assigned.size());
    if (token == bare && in >> token) value = token;
  }
  return value;
}

// Checkpoints of older builds record the batch size only in their command line.
int RecordedBatchSize(const ckpt::CheckpointMeta& meta, int fallback) {
  const std::string batch = RecordedFlag(meta.flags, "batch-size");
  return batch.empty() ? fallback : std::stoi(batch);
}

// The input layout: --schema FILE, else the checkpoint's own schema text (so a checkpoint
// copied to another machine needs no schema file), else (older builds) the schema file its
// run named, else the built-in Criteo layout.
Status InputLayout(const PredictArgs& a, const ckpt::CheckpointMeta& meta, InputSchema* out) {
  if (!a.schema.empty()) return ReadSchemaFile(a.schema, out);
  if (!meta.input_schema.empty()) {
    if (meta.input_schema == CriteoSchema().text) {  // --format criteo: keep its fast path
      *out = CriteoSchema();
      return Status::OK();
    }
    return ParseSchema(meta.input_schema, a.checkpoint + " (its input schema)", out);
  }
  const std::string recorded = RecordedFlag(meta.flags, "schema");
  if (!recorded.empty()) return ReadSchemaFile(recorded, out);
  if (a.format == "parquet") return Status::InvalidArgument("--format parquet needs --schema FILE (the checkpoint names none)");
  *out = CriteoSchema();
  return Status::OK();
}

// The trainer's options for an evaluation-only job over the inputs with the checkpoint's model.
Status OptionsFor(const PredictArgs& a, const ckpt::CheckpointMeta& meta, const Comm& comm, TrainOptions* o) {
  o->program = "strata-predict";
  o->model = meta.model;
  o->train = o->eval = a.inputs;
  o->init_from = a.checkpoint;
  o->threads = a.threads;
  o->max_bad_rows = 0;  // every row gets a probability, so none may be skipped
  o->score_every_row = true;
  o->batch_size = a.batch_size > 0 ? a.batch_size : meta.batch_size > 0 ? meta.batch_size : RecordedBatchSize(meta, o->batch_size);
  if (meta.workers % comm.size() != 0) {
    return Status::InvalidArgument(fmt::format("the checkpoint was trained by {} workers: run on a number of ranks "
                                               "that divides it (not {})", meta.workers, comm.size()));
  }
  o->workers_per_rank = meta.workers / comm.size();
  o->format = a.format;
  STRATA_RETURN_IF_ERROR(InputLayout(a, meta, &o->input));
  if (a.unlabeled) o->input = WithoutLabel(o->input);
  if (o->input.num_slots() != meta.model.num_slots || o->input.num_dense != meta.model.num_dense) {
    return Status::InvalidArgument(fmt::format(
        "the input layout ({}) has {} slots and {} dense features, the checkpoint's model {} and {}",
        o->input.source, o->input.num_slots(), o->input.num_dense, meta.model.num_slots, meta.model.num_dense));
  }
  if (o->input.unit_width > 0 && o->input.unit_width != meta.model.embedding_dim) {
    return Status::InvalidArgument(fmt::format("the input layout ({}) makes rows of {} floats (its widths' greatest "
                                               "common divisor), the checkpoint's model rows of {}",
                                               o->input.source, o->input.unit_width, meta.model.embedding_dim));
  }
  return Status::OK();
}

Status WriteProbabilities(const std::string& path, const std::vector<float>& p) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return ErrnoStatus("--out " + path, errno);
  for (float v : p) std::fprintf(f, "%.9g\n", v);
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  std::fclose(f);
  return ok ? Status::OK() : Status::IOError("--out " + path + ": write failed");
}

Status Predict(const PredictArgs& a, Comm* comm) {
  std::string path;
  ckpt::CheckpointMeta meta;
  Status local = ckpt::ResolveCheckpoint(a.checkpoint, &path);
  if (local.ok()) local = ckpt::ReadMeta(path, &meta);
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  TrainOptions o;
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(OptionsFor(a, meta, *comm, &o)));
  JobParts parts;
  STRATA_RETURN_IF_ERROR(PlanJobInput(o, comm, &parts));
  STRATA_RETURN_IF_ERROR(SetUpJob(o, comm, &parts));
  Checkpointer checkpointer(o, comm);
  TrainProgress progress;
  STRATA_RETURN_IF_ERROR(checkpointer.InitFrom(parts.server.get(), parts.hbm.get(), &progress));
  Evaluator evaluator(o, parts.eval_plan, comm, parts.server.get(), parts.hbm.get(), parts.pool.get());
  EvalResult r;
  STRATA_RETURN_IF_ERROR(evaluator.Evaluate(&r, /*keep_predictions=*/true));
  local = comm->rank() == 0 ? WriteProbabilities(a.out, r.probabilities) : Status::OK();
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  if (comm->rank() == 0) {
    fmt::print("strata-predict: {} rows scored with {} (after pass {}) -> {}\n", r.examples, path, meta.progress.pass,
               a.out);
    if (a.unlabeled) {
      fmt::print("strata-predict: rows={}\n", r.examples);
    } else {
      fmt::print("strata-predict: rows={} auc={:.17g} logloss={:.17g}\n", r.examples, r.auc, r.logloss);
    }
  }
  return Status::OK();
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::MpiSession mpi(&argc, &argv);
  strata::Comm comm;
  strata::InstallFatalErrorHandler("strata-predict", comm.rank());
  const strata::PredictArgs args = strata::ParseArgs(argc, argv);
  const strata::Status st = strata::Predict(args, &comm);
  if (!st.ok()) {
    if (comm.rank() == 0) std::fprintf(stderr, "strata-predict: error: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
