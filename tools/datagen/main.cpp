// strata-datagen: writes a synthetic Criteo-format data set with a known oracle AUC.
//   strata-datagen --out-dir data/synth --train-rows 400000 --eval-rows 100000
// Writes DIR/train.tsv, DIR/eval.tsv and DIR/oracle.json and prints oracle_auc=0.XXXX.
// Exit status: 0 done, 1 an I/O error, 2 a bad flag (one line naming it).
#include <chrono>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "../common/cli.h"
#include "strata/data/synthetic.h"

namespace {

[[noreturn]] void BadFlag(const std::string& message) { strata::tools::BadFlag("strata-datagen", message); }

template <typename T>
T ParseNumber(const cxxopts::ParseResult& args, const std::string& flag) {
  const std::string text = args[flag].as<std::string>();
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    BadFlag("--" + flag + ": '" + text + "' is not a valid number");
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  strata::SyntheticOptions o;
  cxxopts::Options options("strata-datagen", "Synthetic Criteo-format data with a hidden click model.");
  options.add_options()
      ("out-dir", "output directory (created if missing)", cxxopts::value<std::string>())
      ("train-rows", "rows of train.tsv", cxxopts::value<std::string>()->default_value(std::to_string(o.train_rows)))
      ("eval-rows", "rows of eval.tsv", cxxopts::value<std::string>()->default_value(std::to_string(o.eval_rows)))
      ("slots", "categorical columns", cxxopts::value<std::string>()->default_value(std::to_string(o.num_slots)))
      ("dense", "integer columns", cxxopts::value<std::string>()->default_value(std::to_string(o.num_dense)))
      ("cardinality", "distinct tokens per slot (up to 2^52)",
       cxxopts::value<std::string>()->default_value(std::to_string(o.cardinality)))
      ("zipf", "Zipf exponent of each slot's token ranks", cxxopts::value<std::string>()->default_value(fmt::format("{}", o.zipf)))
      ("empty-rate", "chance that a feature field is empty", cxxopts::value<std::string>()->default_value(fmt::format("{}", o.empty_rate)))
      ("ctr", "target mean click probability", cxxopts::value<std::string>()->default_value(fmt::format("{}", o.ctr)))
      ("seed", "seed of the data and of the hidden model", cxxopts::value<std::string>()->default_value(std::to_string(o.seed)))
      ("format", "output format (tsv: Criteo TSV)", cxxopts::value<std::string>()->default_value("tsv"))
      ("h,help", "print this help");
  const cxxopts::ParseResult args = strata::tools::ParseFlagsOrExit(options, argc, argv, "strata-datagen");
  if (!args.count("out-dir")) BadFlag("--out-dir is required");
  if (args["format"].as<std::string>() != "tsv") {
    BadFlag("--format: '" + args["format"].as<std::string>() + "' is not supported (use tsv)");
  }
  o.train_rows = ParseNumber<uint64_t>(args, "train-rows");
  o.eval_rows = ParseNumber<uint64_t>(args, "eval-rows");
  o.num_slots = ParseNumber<int>(args, "slots");
  o.num_dense = ParseNumber<int>(args, "dense");
  o.cardinality = ParseNumber<uint64_t>(args, "cardinality");
  o.zipf = ParseNumber<double>(args, "zipf");
  o.empty_rate = ParseNumber<double>(args, "empty-rate");
  o.ctr = ParseNumber<double>(args, "ctr");
  o.seed = ParseNumber<uint64_t>(args, "seed");
  strata::Status st = o.Validate();
  if (!st.ok()) BadFlag(st.message());

  const std::string dir = args["out-dir"].as<std::string>();
  auto start = std::chrono::steady_clock::now();
  strata::SyntheticSummary summary;
  st = strata::GenerateSynthetic(o, dir, &summary);
  if (!st.ok()) {
    std::fprintf(stderr, "strata-datagen: %s\n", st.ToString().c_str());
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double rows = static_cast<double>(summary.train_rows + summary.eval_rows);
  std::printf("wrote %s/{train,eval}.tsv: %llu + %llu rows, ctr %.4f / %.4f, %.2f s (%.0f rows/s)\n", dir.c_str(),
              static_cast<unsigned long long>(summary.train_rows), static_cast<unsigned long long>(summary.eval_rows),
              summary.train_ctr, summary.eval_ctr, seconds, rows / seconds);
  std::printf("oracle_auc=%.4f\n", summary.oracle_auc);
  return 0;
}
