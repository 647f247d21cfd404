// ParseTrainOptions: command-line tokenizing, the --config file merge and the checks that
// involve more than one flag. What each flag is, parses to and accepts is in the flag table
// (flag_table.h); nothing here names a single flag's type, default or bounds.
#include "strata/train/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "flag_table.h"

namespace strata {
namespace {

// One flag occurrence, from the command line or a config file.
struct Setting {
  const FlagDef* flag;
  std::string value;
  std::string where;  // empty: the command line; else "FILE:LINE" of a config file
};

// *value = the value of flag f found at argv[*i], given `inline_value` (after '=') if it
// had one: none for a switch, the implicit value, or the next argument (then *i advances).
Status ValueOf(const FlagDef& f, std::optional<std::string_view> inline_value, int argc, const char* const* argv,
               int* i, std::string* value) {
  if (f.value_name.empty()) {
    if (inline_value) return Status::InvalidArgument("--" + std::string(f.name) + " takes no value");
    return Status::OK();
  }
  if (inline_value && inline_value->empty() && !f.implicit.empty()) {
    return Status::InvalidArgument("--" + std::string(f.name) + "= needs a value: --" + std::string(f.name) +
                                   " alone means " + std::string(f.implicit) + ", --" + std::string(f.name) + "=" +
                                   std::string(f.value_name) + " a given one");
  }
  if (inline_value) {
    *value = *inline_value;
  } else if (!f.implicit.empty()) {
    *value = f.implicit;
  } else if (*i + 1 < argc) {
    *value = argv[++*i];
  } else {
    return Status::InvalidArgument("--" + std::string(f.name) + " needs a value");
  }
  return Status::OK();
}

// argv as settings: -h, --name, --name=value, --name value.
Status ReadCommandLine(int argc, const char* const* argv, std::vector<Setting>* out) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string_view name;
    std::optional<std::string_view> inline_value;
    if (arg == "-h") {
      name = "help";
    } else if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      name = arg.substr(2);
      if (const size_t eq = name.find('='); eq != std::string_view::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
    }
    const FlagDef* f = name.empty() ? nullptr : FindFlag(name);
    if (f == nullptr) {
      return Status::InvalidArgument("unknown flag or stray argument '" + std::string(arg) + "' (see --help)");
    }
    Setting s{f, "", ""};
    STRATA_RETURN_IF_ERROR(ValueOf(*f, inline_value, argc, argv, &i, &s.value));
    out->push_back(std::move(s));
  }
  return Status::OK();
}

// One config line as (key, value): `key value`, `key = value`, `--key=value`; words after
// the first value are comma-joined. False for a blank or comment line.
bool SplitConfigLine(std::string line, std::string* key, std::string* value) {
  if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
  std::istringstream words(line);
  if (!(words >> *key)) return false;
  value->clear();
  if (const size_t eq = key->find('='); eq != std::string::npos) {
    *value = key->substr(eq + 1);
    key->resize(eq);
  }
  for (std::string rest; words >> rest;) {
    if (rest != "=") *value += value->empty() ? rest : "," + rest;
  }
  if (key->rfind("--", 0) == 0) *key = key->substr(2);
  return true;
}

// The settings of a config file, skipping flags the command line set.
Status ReadConfigFile(const std::string& path, const std::set<std::string_view>& from_cli,
                      std::vector<Setting>* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("--config: " + path + " is a directory, not a file of flags");
  }
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--config: cannot open " + path);
  std::string line, key, value;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (!SplitConfigLine(line, &key, &value)) continue;
    const std::string where = path + ":" + std::to_string(lineno);
    const FlagDef* f = FindFlag(key);
    if (f == nullptr || f->kind != FlagKind::kValue) {
      return Status::InvalidArgument("--config " + where + ": unknown flag --" + key);
    }
    if (from_cli.count(f->name)) continue;
    if (value.empty()) value = f->implicit;  // a bare `resume` line means what --resume alone does
    if (value.empty()) return Status::InvalidArgument("--config " + where + ": --" + key + " needs a value");
    out->push_back({f, value, where});
  }
  if (in.bad()) return Status::InvalidArgument("--config: cannot read " + path);
  return Status::OK();
}

// Stores every setting in order (a later scalar wins; list flags append).
Status Apply(const std::vector<Setting>& settings, TrainOptions* o) {
  for (const Setting& s : settings) {
    const Status st = s.flag->set(s.value, o);
    if (!st.ok()) return s.where.empty() ? st : Status::InvalidArgument("--config " + s.where + ": " + st.message());
  }
  return Status::OK();
}

// The flags that name where a job starts from, and what they need.
Status CheckStartFlags(const TrainOptions& o) {
  if (!o.export_delta_dir.empty() && o.checkpoint_dir.empty()) {
    return Status::InvalidArgument("--export-delta-dir needs --checkpoint-dir (deltas follow checkpoints)");
  }
  if (o.resume == "LATEST" && o.checkpoint_dir.empty()) {
    return Status::InvalidArgument("--resume without a path needs --checkpoint-dir");
  }
  if (o.resume == "auto" && o.checkpoint_dir.empty()) {
    return Status::InvalidArgument("--resume=auto needs --checkpoint-dir");
  }
  if (!o.init_from.empty() && !o.resume.empty() && o.resume != "auto") {
    return Status::InvalidArgument("--init-from and --resume exclude each other (--resume=auto uses --init-from when "
                                   "--checkpoint-dir holds no checkpoint yet)");
  }
  return Status::OK();
}

// A 16-bit row keeps its optimizer state aligned only with an even number of floats.
Status CheckRowDtypeWidth(const TrainOptions& o) {
  if (o.model.row_dtype == RowDtype::kFp32 || o.model.row_dim() % 2 == 0) return Status::OK();
  const std::string width = o.input.unit_width > 0 ? "the schema's row width (its widths' greatest common divisor) "
                                                   : "--embedding-dim ";
  return Status::InvalidArgument(std::string("--row-dtype ") + RowDtypeName(o.model.row_dtype) +
                                 " needs rows of an even number of floats: " + width +
                                 std::to_string(o.model.embedding_dim) +
                                 (o.model.kind == ModelKind::kWdl ? " and --model wdl's wide weight make " : " makes ") +
                                 std::to_string(o.model.row_dim()) +
                                 ", which would leave the optimizer state of a 16-bit row unaligned");
}

// Checks that involve more than one flag, or a flag's absence.
Status CheckCombination(const TrainOptions& o) {
  STRATA_RETURN_IF_ERROR(CheckStartFlags(o));
  STRATA_RETURN_IF_ERROR(CheckRowDtypeWidth(o));
  for (const FlagDef& f : TrainFlags()) {
    if (f.required && f.get(o).empty()) return Status::InvalidArgument("--" + std::string(f.name) + " is required");
  }
  return Status::OK();
}

// A schema's widths decide the embedding width (--embedding-dim may only repeat its `width`
// setting): the rows are its unit, and a slot of several units is a concatenation, which
// the models that compare slots' vectors do not read.
Status ApplySchemaWidths(bool embedding_dim_given, TrainOptions* o) {
  const InputSchema& in = o->input;
  if (in.unit_width == 0) return Status::OK();
  if (embedding_dim_given && o->model.embedding_dim != in.default_width) {
    return Status::InvalidArgument(fmt::format("--embedding-dim {}: the schema {} gives the slots' widths{}",
                                               o->model.embedding_dim, in.source,
                                               in.default_width == 0 ? "" : fmt::format(" (its default: width {})", in.default_width)));
  }
  const ModelKind kind = o->model.kind;
  if (in.MixedWidths() && (kind == ModelKind::kDeepFm || kind == ModelKind::kDlrm || kind == ModelKind::kWdl)) {
    return Status::InvalidArgument(std::string("--model ") + ModelKindName(kind) + " needs one width for every slot; the schema " +
                                   in.source + " gives " + in.WidthsText());
  }
  o->model.embedding_dim = in.unit_width;
  return Status::OK();
}

// The input layout decides the model's slots and dense features.
Status LoadInputSchema(bool embedding_dim_given, TrainOptions* o) {
  if (o->format == "parquet" && o->schema_file.empty()) {
    return Status::InvalidArgument("--format parquet needs --schema FILE naming the files' columns (configs/*.schema)");
  }
  if (o->schema_file.empty()) {
    o->input = CriteoSchema();
  } else {
    const Status st = ReadSchemaFile(o->schema_file, &o->input);
    if (!st.ok()) return Status::InvalidArgument("--schema " + st.message());
  }
  o->model.num_slots = o->input.num_slots();
  o->model.num_dense = o->input.num_dense;
  o->model.mean_slots = o->input.MeanSlots();
  return ApplySchemaWidths(embedding_dim_given, o);
}

}  // namespace

int ThreadsOfRank(const TrainOptions& o, int local_ranks) {
  if (o.threads > 0) return o.threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, local_ranks));
}

Status ParseTrainOptions(int argc, const char* const* argv, TrainOptions* out) {
  TrainOptions& o = *out;
  TrainOptions defaults;
  o = std::move(defaults);
  o.help_text = FlagsHelpText();
  std::vector<Setting> cli;
  STRATA_RETURN_IF_ERROR(ReadCommandLine(argc, argv, &cli));
  std::optional<std::string> config;
  std::set<std::string_view> from_cli;
  std::vector<Setting> settings;  // the config file's, then the command line's
  for (const Setting& s : cli) {
    if (s.flag->kind == FlagKind::kHelp || s.flag->kind == FlagKind::kHelpMarkdown) {
      o.show_help = true;
      if (s.flag->kind == FlagKind::kHelpMarkdown) o.help_text = FlagsMarkdown();
      return Status::OK();
    }
    if (s.flag->kind == FlagKind::kConfig) config = s.value;
    if (s.flag->kind == FlagKind::kValue) from_cli.insert(s.flag->name);
  }
  if (config) STRATA_RETURN_IF_ERROR(ReadConfigFile(*config, from_cli, &settings));
  std::vector<std::string> tokens;
  for (const Setting& s : settings) tokens.push_back("--" + std::string(s.flag->name) + "=" + s.value);
  tokens.insert(tokens.end(), argv + 1, argv + argc);
  for (const std::string& t : tokens) o.command_line += (o.command_line.empty() ? "" : " ") + t;
  for (const Setting& s : cli) {
    if (s.flag->kind == FlagKind::kValue) settings.push_back(s);
  }
  STRATA_RETURN_IF_ERROR(Apply(settings, &o));
  const bool embedding_dim_given = std::any_of(settings.begin(), settings.end(), [](const Setting& s) {
    return s.flag->name == std::string_view("embedding-dim");
  });
  STRATA_RETURN_IF_ERROR(LoadInputSchema(embedding_dim_given, &o));
  return CheckCombination(o);
}

}  // namespace strata
