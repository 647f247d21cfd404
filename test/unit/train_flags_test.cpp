// The flag table and ParseTrainOptions: every default is the struct's and parses back to
// it; each bound is rejected at its edge (and the closed edge accepted) naming the flag;
// nan and inf are refused; integers beyond their type are "out of range" with the bound;
// the --config merge (command line wins, file:line in errors); --resume, --help, lists.
// Config files go to a fresh temporary directory; nothing depends on time or order.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "data_test_files.h"
#include "strata/ssd/ssd_store.h"
#include "strata/train/options.h"
#include "train/flag_table.h"
#include "train/flag_values.h"

namespace strata {
namespace {

Status Parse(std::vector<std::string> args, TrainOptions* o) {
  std::vector<const char*> argv = {"strata-train"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return ParseTrainOptions(static_cast<int>(argv.size()), argv.data(), o);
}

// Parses `--train x --flag=value`; the status.
Status ParseFlag(const FlagDef& f, const std::string& value) {
  TrainOptions o;
  return Parse({"--train", "x", "--" + std::string(f.name) + "=" + value}, &o);
}

// The error of `--flag=value`; fails the test if it parsed.
std::string ErrorOf(const std::string& flag, const std::string& value) {
  TrainOptions o;
  const Status st = Parse({"--train", "x", "--" + flag + "=" + value}, &o);
  CHECK_MESSAGE(!st.ok(), "--", flag, "=", value, " was accepted");
  CHECK(st.code() == Status::Code::kInvalidArgument);
  return st.message();
}

struct ErrorCase {
  const char* flag;
  const char* value;
  const char* message;  // the whole message of `--flag=value`
};

void CheckErrors(std::initializer_list<ErrorCase> cases) {
  for (const ErrorCase& c : cases) CHECK(ErrorOf(c.flag, c.value) == c.message);
}

bool IsNumeric(const FlagDef& f) { return f.accepts == "integer" || f.accepts == "number" || f.accepts == "integers"; }

// A value as the flag writes it: "64,<v>" for a list, so only the item is at the edge.
std::string AsValue(const FlagDef& f, double v) {
  const std::string text = f.integral ? FormatNumber(static_cast<int64_t>(v)) : FormatNumber(v);
  return f.accepts == "integers" ? "64," + text : text;
}

TEST_CASE("flags: the table names each flag once, and every value flag can be set and read") {
  std::set<std::string_view> names;
  const TrainOptions defaults;
  for (const FlagDef& f : TrainFlags()) {
    CHECK_MESSAGE(names.insert(f.name).second, "--", f.name, " is declared twice");
    CHECK(!f.help.empty());
    CHECK(FindFlag(f.name) == &f);
    if (f.kind != FlagKind::kValue) continue;
    CHECK_MESSAGE((f.set && f.get), "--", f.name, " has no field");
    if (f.repeatable) CHECK_MESSAGE(f.get(defaults).empty(), "repeatable --", f.name, " needs an empty default");
  }
  CHECK(FindFlag("no-such-flag") == nullptr);
}

TEST_CASE("flags: every default equals the struct's default and parses back to it") {
  TrainOptions base;
  REQUIRE(Parse({"--train", "x"}, &base).ok());
  TrainOptions expected;
  expected.train = {"x"};
  expected.help_text = base.help_text;
  expected.command_line = base.command_line;
  CHECK(base == expected);
  const TrainOptions defaults;
  for (const FlagDef& f : TrainFlags()) {
    if (f.kind != FlagKind::kValue || f.required) continue;
    const std::string text = f.get(defaults);
    if (text.empty()) continue;  // an empty value (--resume=, --checkpoint-dir=) is an error by design
    TrainOptions o;
    const Status st = Parse({"--train", "x", "--" + std::string(f.name) + "=" + text}, &o);
    REQUIRE_MESSAGE(st.ok(), "--", f.name, "=", text, ": ", st.message());
    o.command_line = base.command_line;
    CHECK_MESSAGE(o == base, "--", f.name, "=", text, " is not the default");
  }
}

TEST_CASE("flags: a text flag given an empty value is refused naming it") {
  TrainOptions o;
  const Status st = Parse({"--train", "x", "--checkpoint-dir="}, &o);
  CHECK(!st.ok());
  CHECK(st.message().find("--checkpoint-dir needs a value") != std::string::npos);
}

TEST_CASE("flags: each bound is rejected at its edge naming the flag; closed edges are accepted") {
  int edges = 0;
  for (const FlagDef& f : TrainFlags()) {
    if (!IsNumeric(f) || !f.bounds.bounded()) continue;
    const std::string dashed = "--" + std::string(f.name);
    const Interval b = f.integral ? IntegerBounds(f.bounds) : f.bounds;
    if (b.lo != -Interval::kInf) {
      const double outside = b.lo_open ? b.lo : (f.integral ? b.lo - 1 : std::nextafter(b.lo, -Interval::kInf));
      const double inside = b.lo_open ? b.lo + 1e-3 : b.lo;
      CHECK_MESSAGE(ErrorOf(std::string(f.name), AsValue(f, outside)).find(dashed) != std::string::npos, dashed);
      CHECK_MESSAGE(ParseFlag(f, AsValue(f, inside)).ok(), dashed, "=", AsValue(f, inside), " refused");
      ++edges;
    }
    if (b.hi != Interval::kInf) {
      const double outside = b.hi_open ? b.hi : (f.integral ? b.hi + 1 : std::nextafter(b.hi, Interval::kInf));
      const double inside = b.hi_open ? b.hi - 1e-3 : b.hi;
      CHECK_MESSAGE(ErrorOf(std::string(f.name), AsValue(f, outside)).find(dashed) != std::string::npos, dashed);
      CHECK_MESSAGE(ParseFlag(f, AsValue(f, inside)).ok(), dashed, "=", AsValue(f, inside), " refused");
      ++edges;
    }
  }
  CHECK(edges >= 20);
}

TEST_CASE("flags: --ssd-compact-threshold takes the SSD-PS's own range, (0, 1]") {
  const FlagDef* f = FindFlag("ssd-compact-threshold");
  REQUIRE(f != nullptr);
  CHECK(f->bounds.ToString() == kCompactThresholdRange.ToString());
  CHECK(f->bounds.ToString() == "(0, 1]");
  TrainOptions o;
  REQUIRE(Parse({"--train", "x", "--ssd-compact-threshold", "1"}, &o).ok());
  CHECK(o.ssd_compact_threshold == 1.0);
}

TEST_CASE("flags: nan and inf are rejected by every numeric flag, naming it") {
  for (const FlagDef& f : TrainFlags()) {
    if (!IsNumeric(f)) continue;
    for (const char* bad : {"nan", "inf", "-inf", "NaN", "infinity"}) {
      const std::string value = f.accepts == "integers" ? std::string("64,") + bad : bad;
      const std::string msg = ErrorOf(std::string(f.name), value);
      CHECK_MESSAGE(msg.find("--" + std::string(f.name)) != std::string::npos, msg);
      if (!f.integral) CHECK_MESSAGE(msg.find("is not a finite number") != std::string::npos, msg);
    }
  }
}

TEST_CASE("flags: each message names the flag and the bound or the accepted values") {
  CheckErrors({
      {"epochs", "0", "--epochs must be positive, got 0"},
      {"threads", "-1", "--threads must be >= 0, got -1"},
      {"prefetch-passes", "17", "--prefetch-passes must be at most 16, got 17"},
      {"embedding-dim", "1025", "--embedding-dim must be at most 1024, got 1025"},
      {"mlp", "64,0", "--mlp items must be positive, got 0"},
      {"ssd-compact-threshold", "0", "--ssd-compact-threshold must be positive, got 0"},
      {"batch-size", "abc", "--batch-size: 'abc' is not a valid number"},
      {"batch-size", "1.5", "--batch-size: '1.5' is not an integer"},
      {"ssd-io", "dma", "--ssd-io: 'dma' is not direct or buffered"},
      {"device", "gpu", "--device: 'gpu' is not cpu, cuda or auto"},
      // Integers beyond their type are out of range, with the type's bound...
      {"batch-size", "2147483648", "--batch-size: '2147483648' is out of range (at most 2147483647)"},
      {"max-bad-rows", "9223372036854775808",
       "--max-bad-rows: '9223372036854775808' is out of range (at most 9223372036854775807)"},
      {"seed", "18446744073709551616", "--seed: '18446744073709551616' is out of range (at most 18446744073709551615)"},
      {"seed", "-1", "--seed: '-1' is out of range (at least 0)"},
      {"lr-dense", "1e50", "--lr-dense: '1e50' is out of range (at most 3.4028235e+38)"},
      // ...or the flag's own bound where that one excludes the value.
      {"prefetch-passes", "99999999999", "--prefetch-passes must be at most 16, got 99999999999"},
      {"epochs", "-99999999999", "--epochs must be positive, got -99999999999"},
  });
}

TEST_CASE("flags: words, lists and switches") {
  TrainOptions o;
  REQUIRE(Parse({"--train", "a,b", "--train=c", "--eval", "e", "--pipeline", "off", "--ssd-io=direct",
                 "--sparse-optimizer", "sgd", "--mlp", "32,16"},
                &o)
              .ok());
  CHECK(o.train == std::vector<std::string>{"a", "b", "c"});
  CHECK(o.eval == std::vector<std::string>{"e"});
  CHECK(!o.pipeline);
  CHECK(o.ssd_direct_io);
  CHECK(o.model.sparse_optimizer == SparseOptimizerKind::kSgd);
  CHECK(o.model.mlp == std::vector<int>{32, 16});
  CHECK(o.command_line == "--train a,b --train=c --eval e --pipeline off --ssd-io=direct --sparse-optimizer sgd --mlp 32,16");
  CHECK(Parse({"--train", "x", "--no-such-flag", "3"}, &o).message() ==
        "unknown flag or stray argument '--no-such-flag' (see --help)");
  CHECK(Parse({"--train", "x", "stray"}, &o).message() == "unknown flag or stray argument 'stray' (see --help)");
  CHECK(Parse({"--train", "x", "--epochs"}, &o).message() == "--epochs needs a value");
  CHECK(Parse({"--help=yes"}, &o).message() == "--help takes no value");
  CHECK(Parse({}, &o).message() == "--train is required");
}

TEST_CASE("flags: --resume alone is LATEST, --resume=PATH a path, --resume= an error") {
  TrainOptions o;
  REQUIRE(Parse({"--train", "x", "--checkpoint-dir", "ck", "--resume"}, &o).ok());
  CHECK(o.resume == "LATEST");
  REQUIRE(Parse({"--train", "x", "--resume=ck/ckpt-00000002"}, &o).ok());
  CHECK(o.resume == "ck/ckpt-00000002");
  const Status empty = Parse({"--train", "x", "--resume="}, &o);
  CHECK(empty.code() == Status::Code::kInvalidArgument);
  CHECK(empty.message().find("--resume") == 0);
  CHECK(Parse({"--train", "x", "--resume"}, &o).message() == "--resume without a path needs --checkpoint-dir");
  CHECK(Parse({"--train", "x", "--export-delta-dir", "d"}, &o).message() ==
        "--export-delta-dir needs --checkpoint-dir (deltas follow checkpoints)");
}

TEST_CASE("flags: a schema's widths set the row width, refuse another --embedding-dim and the models that compare slots") {
  test::TempDir dir;
  const std::string mixed = dir.File("mixed.schema"), even = dir.File("even.schema");
  test::WriteText(mixed, "width 8\ncolumn y label\ncolumn a categorical width 24\ncolumn b categorical\n");
  test::WriteText(even, "width 12\ncolumn y label\ncolumn a categorical\ncolumn b categorical\n");
  TrainOptions o;
  REQUIRE(Parse({"--train", "x", "--schema", mixed}, &o).ok());
  CHECK(o.model.embedding_dim == 8);
  CHECK(o.model.num_slots == 4);
  REQUIRE(Parse({"--train", "x", "--schema", mixed, "--embedding-dim", "8"}, &o).ok());  // the schema's default
  CHECK(Parse({"--train", "x", "--schema", mixed, "--embedding-dim", "16"}, &o).message() ==
        "--embedding-dim 16: the schema " + mixed + " gives the slots' widths (its default: width 8)");
  for (const char* model : {"deepfm", "dlrm", "wdl"}) {
    CHECK(Parse({"--train", "x", "--schema", mixed, "--model", model}, &o).message() ==
          "--model " + std::string(model) + " needs one width for every slot; the schema " + mixed +
              " gives slots 8..24 wide: 4 unit slots of 8 floats");
  }
  REQUIRE(Parse({"--train", "x", "--schema", even, "--model", "deepfm"}, &o).ok());
  CHECK(o.model.embedding_dim == 12);
  REQUIRE(Parse({"--train", "x", "--schema", mixed, "--model", "dcn"}, &o).ok());
  CHECK(Parse({"--train", "x", "--schema", even, "--model", "wdl", "--row-dtype", "bf16"}, &o).message() ==
        "--row-dtype bf16 needs rows of an even number of floats: the schema's row width (its widths' greatest common "
        "divisor) 12 and --model wdl's wide weight make 13, which would leave the optimizer state of a 16-bit row "
        "unaligned");
}

TEST_CASE("flags: --help and --help-markdown print the table with the struct's defaults") {
  TrainOptions o;
  REQUIRE(Parse({"-h"}, &o).ok());
  CHECK(o.show_help);
  CHECK(o.help_text.find("--batch-size N") != std::string::npos);
  CHECK(o.help_text.find("default: 512,256,128") != std::string::npos);
  CHECK(o.help_text.find("number in (0, 1]") != std::string::npos);
  REQUIRE(Parse({"--help-markdown"}, &o).ok());
  CHECK(o.show_help);
  CHECK(o.help_text == FlagsMarkdown());
  CHECK(o.help_text.rfind("**Data**\n", 0) == 0);
  CHECK(o.help_text.find("| `--batch-size N` | `1024` | integer >= 1 |") != std::string::npos);
  CHECK(o.help_text.find("| `--adagrad-init X` | `1e-06` |") != std::string::npos);
}

TEST_CASE("flags: a config file merges under the command line; its errors name file:line") {
  test::TempDir dir;
  const std::string path = dir.File("run.flags");
  test::WriteText(path, "# comment\nbatch-size = 128\n--epochs=3  # overridden\nmlp 64 32\ntrain a.tsv\n");
  TrainOptions o;
  REQUIRE(Parse({"--config", path, "--epochs", "1"}, &o).ok());
  CHECK(o.batch_size == 128);
  CHECK(o.epochs == 1);
  CHECK(o.model.mlp == std::vector<int>{64, 32});
  CHECK(o.train == std::vector<std::string>{"a.tsv"});
  CHECK(o.command_line == "--batch-size=128 --mlp=64,32 --train=a.tsv --config " + path + " --epochs 1");
  REQUIRE(Parse({"--config", path, "--train", "b.tsv"}, &o).ok());
  CHECK(o.train == std::vector<std::string>{"b.tsv"});

  test::WriteText(path, "batch-size 64\nlearning-rate 0.1\n");
  CHECK(Parse({"--train", "x", "--config", path}, &o).message() ==
        "--config " + path + ":2: unknown flag --learning-rate");
  test::WriteText(path, "help\n");
  CHECK(Parse({"--train", "x", "--config", path}, &o).message() == "--config " + path + ":1: unknown flag --help");
  test::WriteText(path, "\nbatch-size nan\n");
  CHECK(Parse({"--train", "x", "--config", path}, &o).message() ==
        "--config " + path + ":2: --batch-size: 'nan' is not a finite number");
  test::WriteText(path, "epochs\n");
  CHECK(Parse({"--train", "x", "--config", path}, &o).message() == "--config " + path + ":1: --epochs needs a value");
  CHECK(Parse({"--train", "x", "--config", dir.path()}, &o).message() ==
        "--config: " + dir.path() + " is a directory, not a file of flags");
  CHECK(Parse({"--train", "x", "--config", dir.File("nope.flags")}, &o).message() ==
        "--config: cannot open " + dir.File("nope.flags"));
}

}  // namespace
}  // namespace strata
