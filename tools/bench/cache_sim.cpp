// cache_sim: how close the MEM-PS cache policy comes to Belady's optimum. Reads Criteo-format
// TSV (real samples or strata-datagen output) with the project's reader, cuts it into passes
// of --pass-examples, and replays the key trace through the MEM-PS policy (the CachePolicy
// the cache runs), plain LRU, Belady's offline optimum and a frequency oracle, each holding
// the same number of rows: a fraction of the trace's distinct keys. One access per distinct
// key per pass (the trainer's pull) unless --per-example; see strata/mem/policy_sim.h.
//
//   build/bench/cache_sim --input ../shared/data/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz
//       [--pass-examples 10000] [--capacities 0.05,0.10,0.20] [--per-example] [--freq row|passes]
//       [--lookahead 1]
#include <cstdio>
#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "strata/data/batch.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/input_files.h"
#include "strata/data/shard_plan.h"
#include "strata/mem/cache_policy.h"
#include "strata/mem/policy_sim.h"

namespace {

using strata::Status;

// Reads every example of `files` in order into a trace, one pass per pass_examples.
Status ReadTrace(const std::vector<std::string>& patterns, int pass_examples, bool per_example,
                 strata::KeyTrace* out, uint64_t* examples, uint64_t* bad_rows) {
  std::vector<std::string> files;
  STRATA_RETURN_IF_ERROR(strata::ExpandInputs(patterns, &files));
  strata::ShardPlan plan;
  STRATA_RETURN_IF_ERROR(strata::PlanShards(files, 1, static_cast<uint64_t>(pass_examples), &plan));
  strata::TsvSchema schema;
  strata::ChunkReader reader(plan, 0, schema);
  strata::KeyTraceBuilder builder(per_example);
  strata::Batch batch;
  *examples = 0;
  for (;;) {
    STRATA_RETURN_IF_ERROR(reader.Next(pass_examples, &batch));
    if (batch.num_examples == 0) break;
    const size_t slots = static_cast<size_t>(batch.num_slots);
    for (int i = 0; i < batch.num_examples; ++i) {
      const uint32_t begin = batch.offsets[i * slots];
      const uint32_t end = batch.offsets[(i + 1) * slots];
      builder.AddExample(batch.keys.data() + begin, end - begin);
    }
    builder.EndPass();
    *examples += static_cast<uint64_t>(batch.num_examples);
  }
  for (const std::string& m : reader.bad_row_messages()) std::fprintf(stderr, "cache_sim: skipped %s\n", m.c_str());
  *bad_rows = reader.bad_rows();
  *out = builder.Finish();
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("cache_sim", "MEM-PS cache policy vs LRU and Belady's optimum on a key trace");
  opts.add_options()
      ("input", "Criteo TSV files or globs (plain or gzip)", cxxopts::value<std::vector<std::string>>())
      ("pass-examples", "examples per pass", cxxopts::value<int>()->default_value("10000"))
      ("capacities", "cache sizes as fractions of the distinct keys",
       cxxopts::value<std::vector<double>>()->default_value("0.05,0.10,0.20"))
      ("per-example", "one access per key occurrence instead of one per distinct key per pass")
      ("freq", "MEM-PS frequency: row (the row's example counter) or passes (passes seen while cached)",
       cxxopts::value<std::string>()->default_value("row"))
      ("lookahead", "passes after the pulled one whose keys the MEM-PS knows (the trainer announces 1)",
       cxxopts::value<int>()->default_value("1"))
      ("h,help", "print this help");
  cxxopts::ParseResult args;
  try {
    args = opts.parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_sim: %s\n", e.what());
    return 2;
  }
  if (args.count("help")) {
    std::printf("%s\n", opts.help().c_str());
    return 0;
  }
  if (!args.count("input")) {
    std::fprintf(stderr, "cache_sim: --input is required\n");
    return 2;
  }
  const int pass_examples = args["pass-examples"].as<int>();
  if (pass_examples < 1) {
    std::fprintf(stderr, "cache_sim: --pass-examples must be >= 1 (got %d)\n", pass_examples);
    return 2;
  }
  const std::vector<double> fractions = args["capacities"].as<std::vector<double>>();
  for (double f : fractions) {
    if (!(f > 0 && f <= 1)) {
      std::fprintf(stderr, "cache_sim: --capacities: %g is not a fraction in (0, 1]\n", f);
      return 2;
    }
  }
  const std::string freq_name = args["freq"].as<std::string>();
  if (freq_name != "row" && freq_name != "passes") {
    std::fprintf(stderr, "cache_sim: --freq must be row or passes (got '%s')\n", freq_name.c_str());
    return 2;
  }
  const auto freq = freq_name == "row" ? strata::FreqSource::kRowCounter : strata::FreqSource::kPassCount;
  const bool per_example = args.count("per-example") > 0;
  const int lookahead = args["lookahead"].as<int>();
  if (lookahead < 0 || lookahead >= strata::CachePolicy::kPinWindow - 2) {
    std::fprintf(stderr, "cache_sim: --lookahead must be in [0, %d] (got %d)\n",
                 strata::CachePolicy::kPinWindow - 3, lookahead);
    return 2;
  }

  strata::KeyTrace trace;
  uint64_t examples = 0, bad_rows = 0;
  Status st = ReadTrace(args["input"].as<std::vector<std::string>>(), pass_examples, per_example,
                        &trace, &examples, &bad_rows);
  if (!st.ok()) {
    std::fprintf(stderr, "cache_sim: %s\n", st.ToString().c_str());
    return 1;
  }
  const size_t distinct = trace.DistinctKeys();
  std::printf("examples %llu (bad rows skipped %llu), passes %zu, accesses %zu (%s), distinct keys %zu\n",
              static_cast<unsigned long long>(examples), static_cast<unsigned long long>(bad_rows),
              trace.passes(), trace.accesses(), per_example ? "per example" : "per distinct key per pass",
              distinct);
  std::printf("MEM-PS knows the keys of the pulled pass and the %d after it\n", lookahead);
  std::printf("ceiling (every access but each key's first is a hit): %.4f\n",
              trace.accesses() ? double(trace.accesses() - distinct) / double(trace.accesses()) : 0.0);
  std::printf("%9s %10s %8s %8s %8s %9s %12s\n", "capacity", "rows", "memps", "lru", "belady",
              "freq-orc", "memps/belady");
  for (double f : fractions) {
    const size_t rows = static_cast<size_t>(f * static_cast<double>(distinct));
    const double memps = strata::SimulateMemPs(trace, rows, freq, lookahead).hit_rate();
    const double lru = strata::SimulateLru(trace, rows).hit_rate();
    const double belady = strata::SimulateBelady(trace, rows).hit_rate();
    const double oracle = strata::SimulateFrequencyOracle(trace, rows).hit_rate();
    std::printf("%8.1f%% %10zu %8.4f %8.4f %8.4f %9.4f %12.3f\n", 100 * f, rows, memps, lru, belady,
                oracle, belady > 0 ? memps / belady : 0.0);
  }
  return 0;
}
