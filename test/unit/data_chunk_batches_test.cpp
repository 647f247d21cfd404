// ChunkReader::NextBatches against repeated Next: on two files with seeded bad rows and
// blank lines, pass after pass of passes smaller and larger than a round of lines, the same
// batches, lines consumed, bad-row count and messages, with and without a thread pool.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "data_test_files.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/shard_plan.h"

namespace strata {
namespace {

// Criteo rows: mostly good, some with a bad label or a missing column, some blank lines.
std::string RandomRows(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int i = 0; i < n; ++i) {
    const uint64_t kind = rng() % 20;
    if (kind == 0) {
      text += "\n";
      continue;
    }
    text.push_back(kind == 1 ? '2' : (rng() % 2 ? '1' : '0'));
    for (int d = 0; d < 13; ++d) {
      text.push_back('\t');
      text.append(std::to_string(rng() % 50));
    }
    for (int s = 0; s < (kind == 2 ? 25 : 26); ++s) {
      text.push_back('\t');
      if (rng() % 7 != 0) text.append(std::to_string(rng() % 300));
    }
    text.push_back('\n');
  }
  return text;
}

bool SameBatch(const Batch& a, const Batch& b) {
  return a.num_examples == b.num_examples && a.labels == b.labels && a.dense == b.dense && a.keys == b.keys &&
         a.offsets == b.offsets;
}

// Passes of 7 batches of 100 (one round of lines each, made up by a further round for the
// bad rows) and of 120 batches of 1000 (several rounds of lines).
TEST_CASE("data: NextBatches gives what repeated Next gives, on any thread count") {
  test::TempDir dir;
  test::WriteText(dir.File("a.tsv"), RandomRows(90000, 1));
  test::WriteText(dir.File("b.tsv"), RandomRows(60000, 2));
  ShardPlan plan;
  REQUIRE(PlanShards({dir.File("a.tsv"), dir.File("b.tsv")}, 1, 64, &plan).ok());
  for (const auto& [examples, batches] : {std::pair{100, 7}, std::pair{1000, 120}}) {
    for (int threads : {1, 3}) {
      CAPTURE(examples);
      CAPTURE(threads);
      ThreadPool pool(threads);
      ChunkReader one(plan, 0, TsvSchema()), many(plan, 0, TsvSchema());
      for (int pass = 0;; ++pass) {
        CAPTURE(pass);
        std::vector<Batch> want;
        for (int b = 0; b < batches; ++b) {
          Batch batch;
          REQUIRE(one.Next(examples, &batch).ok());
          if (batch.num_examples == 0) break;
          want.push_back(std::move(batch));
        }
        std::vector<Batch> got;
        REQUIRE(many.NextBatches(examples, batches, threads > 1 ? &pool : nullptr, &got).ok());
        REQUIRE(got.size() == want.size());
        for (size_t b = 0; b < want.size(); ++b) CHECK(SameBatch(got[b], want[b]));
        CHECK(many.lines_read() == one.lines_read());
        CHECK(many.bad_rows() == one.bad_rows());
        CHECK(many.bad_row_messages() == one.bad_row_messages());
        if (want.empty()) break;
      }
      CHECK(one.bad_rows() > 100);  // the seeded bad rows were there to be skipped
    }
  }
}

}  // namespace
}  // namespace strata
