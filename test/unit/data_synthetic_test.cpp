// strata-datagen's engine: same options give the same bytes, the output parses cleanly
// with the Criteo reader, the oracle is sane, bad options name their flag; and the Zipf
// sampler matches the exact distribution and handles huge cardinalities.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "data/zipf.h"
#include "data_test_files.h"
#include "strata/common/partition.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/shard_plan.h"
#include "strata/data/synthetic.h"

namespace strata {
namespace {

SyntheticOptions SmallOptions() {
  SyntheticOptions o;
  o.train_rows = 3000;
  o.eval_rows = 2000;
  o.cardinality = 500;
  o.seed = 7;
  return o;
}

}  // namespace

TEST_CASE("data: datagen is deterministic in its options") {
  test::TempDir a, b, c;
  SyntheticOptions o = SmallOptions();
  SyntheticSummary sa, sb, sc;
  REQUIRE(GenerateSynthetic(o, a.path(), &sa).ok());
  REQUIRE(GenerateSynthetic(o, b.path(), &sb).ok());
  for (const char* name : {"train.tsv", "eval.tsv", "oracle.json"}) {
    CAPTURE(name);
    std::string bytes = test::ReadBytes(a.File(name));
    CHECK(!bytes.empty());
    CHECK(bytes == test::ReadBytes(b.File(name)));
  }
  CHECK(sa.oracle_auc == sb.oracle_auc);

  // The eval split has its own stream: more train rows leave it unchanged.
  o.train_rows = 100;
  REQUIRE(GenerateSynthetic(o, c.path(), &sc).ok());
  CHECK(test::ReadBytes(c.File("eval.tsv")) == test::ReadBytes(a.File("eval.tsv")));
  CHECK(sc.oracle_auc == sa.oracle_auc);
  o.seed = 8;
  REQUIRE(GenerateSynthetic(o, c.path(), &sc).ok());
  CHECK(test::ReadBytes(c.File("eval.tsv")) != test::ReadBytes(a.File("eval.tsv")));
}

TEST_CASE("data: datagen output parses cleanly and carries signal") {
  test::TempDir dir;
  SyntheticOptions o = SmallOptions();
  SyntheticSummary s;
  REQUIRE(GenerateSynthetic(o, dir.path(), &s).ok());
  CHECK(s.oracle_auc > 0.65);
  CHECK(s.oracle_auc < 0.95);
  CHECK(s.eval_ctr > 0.15);
  CHECK(s.eval_ctr < 0.35);
  std::string json = test::ReadBytes(dir.File("oracle.json"));
  CHECK(json.rfind("{\"oracle_auc\":0.", 0) == 0);
  CHECK(json.find("\"eval_rows\":2000,\"train_rows\":3000,\"seed\":7") != std::string::npos);

  ShardPlan plan;
  REQUIRE(PlanShards({dir.File("train.tsv"), dir.File("eval.tsv")}, 2, 512, &plan).ok());
  CHECK(plan.total_lines() == 5000);
  uint64_t examples = 0, keys = 0, clicks = 0, wrong_slot = 0;
  for (int w = 0; w < 2; ++w) {
    ChunkReader reader(plan, w, TsvSchema{});
    Batch batch;
    for (;;) {
      REQUIRE(reader.Next(512, &batch).ok());
      if (batch.num_examples == 0) break;
      examples += static_cast<uint64_t>(batch.num_examples);
      keys += batch.keys.size();
      for (float l : batch.labels) clicks += l > 0.5f ? 1 : 0;
      for (size_t i = 0; i < batch.offsets.size() - 1; ++i) {
        for (uint32_t k = batch.offsets[i]; k < batch.offsets[i + 1]; ++k) {
          wrong_slot += SlotOfKey(batch.keys[k]) != static_cast<int>(i % 26) ? 1 : 0;
        }
      }
    }
    CHECK(reader.bad_rows() == 0);
  }
  CHECK(examples == 5000);
  CHECK(wrong_slot == 0);
  // About 5% of the 26 slots are empty.
  CHECK(static_cast<double>(keys) / static_cast<double>(examples) == doctest::Approx(26 * 0.95).epsilon(0.02));
  CHECK(static_cast<double>(clicks) ==
        doctest::Approx(s.train_ctr * 3000 + s.eval_ctr * 2000).epsilon(1e-9));
}

TEST_CASE("data: datagen options are validated, naming the flag") {
  SyntheticOptions o = SmallOptions();
  o.zipf = 0;
  CHECK(o.Validate().message().find("--zipf") != std::string::npos);
  o = SmallOptions();
  o.cardinality = 0;
  CHECK(o.Validate().message().find("--cardinality") != std::string::npos);
  o = SmallOptions();
  o.num_slots = 300;
  CHECK(o.Validate().message().find("--slots") != std::string::npos);
  o = SmallOptions();
  o.empty_rate = 1.0;
  CHECK(o.Validate().message().find("--empty-rate") != std::string::npos);
  test::TempDir dir;
  SyntheticSummary s;
  CHECK(GenerateSynthetic(o, dir.path(), &s).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("data: Zipf sampler matches the exact distribution") {
  for (double exponent : {0.7, 1.0, 1.1, 2.0}) {
    CAPTURE(exponent);
    const uint64_t n = 20;
    data_internal::ZipfSampler zipf(n, exponent);
    std::mt19937_64 gen(42);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto uniform = [&] { return unit(gen); };
    const int draws = 200000;
    std::vector<int> counts(n + 2, 0);
    for (int i = 0; i < draws; ++i) ++counts[std::min(zipf.Sample(uniform), n + 1)];
    CHECK(counts[0] == 0);
    CHECK(counts[n + 1] == 0);
    double norm = 0;
    for (uint64_t k = 1; k <= n; ++k) norm += std::pow(static_cast<double>(k), -exponent);
    for (uint64_t k = 1; k <= n; ++k) {
      double p = std::pow(static_cast<double>(k), -exponent) / norm;
      double sigma = std::sqrt(draws * p * (1 - p));
      CHECK(std::fabs(counts[k] - draws * p) < 5 * sigma);
    }
  }
}

TEST_CASE("data: Zipf sampler handles billions of ranks") {
  const uint64_t n = uint64_t{1} << 40;
  data_internal::ZipfSampler zipf(n, 1.05);
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto uniform = [&] { return unit(gen); };
  uint64_t ones = 0, beyond_2_32 = 0, out_of_range = 0;
  for (int i = 0; i < 100000; ++i) {
    uint64_t k = zipf.Sample(uniform);
    out_of_range += k < 1 || k > n ? 1 : 0;
    ones += k == 1 ? 1 : 0;
    beyond_2_32 += k > (uint64_t{1} << 32) ? 1 : 0;
  }
  CHECK(out_of_range == 0);
  CHECK(ones > 1000);         // rank 1 keeps a few percent of the mass
  CHECK(beyond_2_32 > 1000);  // and the far tail is reached
}

}  // namespace strata
