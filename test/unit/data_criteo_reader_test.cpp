// ChunkReader on Criteo TSV: exact keys, dense values and labels of known rows, empty
// fields, token hashing, batching, malformed rows reported as file:line, and the real
// Criteo sample (skipped when ../shared/data is absent).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "data_test_files.h"
#include "strata/common/partition.h"
#include "data/label_field.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/shard_plan.h"

namespace strata {
namespace {

using test::TempDir;

// A 40-column row: label, I1..I13 = ints, C1..C26 = tokens.
std::string CriteoRow(const std::string& label, const std::vector<std::string>& ints,
                      const std::vector<std::string>& tokens) {
  std::string row = label;
  for (const std::string& v : ints) row += "\t" + v;
  for (const std::string& t : tokens) row += "\t" + t;
  return row;
}

std::vector<std::string> Repeat(const std::string& v, int n) { return std::vector<std::string>(static_cast<size_t>(n), v); }

// Reads a whole chunk into one batch; returns the reader's final status.
Status ReadAll(const ShardPlan& plan, int worker, Batch* all, uint64_t* bad,
               std::vector<std::string>* messages) {
  ChunkReader reader(plan, worker, TsvSchema{});
  all->Clear(26, 13);
  Batch batch;
  for (;;) {
    STRATA_RETURN_IF_ERROR(reader.Next(1000, &batch));
    if (batch.num_examples == 0) break;
    for (int i = 0; i < batch.num_examples; ++i) {
      all->labels.push_back(batch.labels[static_cast<size_t>(i)]);
      for (int j = 0; j < 13; ++j) all->dense.push_back(batch.dense[static_cast<size_t>(i * 13 + j)]);
      for (int s = 0; s < 26; ++s) {
        for (uint32_t k = batch.offsets[static_cast<size_t>(i * 26 + s)]; k < batch.offsets[static_cast<size_t>(i * 26 + s + 1)]; ++k) {
          all->keys.push_back(batch.keys[k]);
        }
        all->offsets.push_back(static_cast<uint32_t>(all->keys.size()));
      }
      ++all->num_examples;
    }
  }
  *bad = reader.bad_rows();
  *messages = reader.bad_row_messages();
  return Status::OK();
}

// ReadAll of a whole file by one worker; planning and reading must succeed.
void ReadWholeFile(const std::string& path, Batch* all, uint64_t* bad, std::vector<std::string>* messages) {
  ShardPlan plan;
  REQUIRE(PlanShards({path}, 1, 64, &plan).ok());
  REQUIRE(ReadAll(plan, 0, all, bad, messages).ok());
}

}  // namespace

TEST_CASE("data: token hash is the hex value, else FNV-1a") {
  CHECK(CriteoTokenHash("68fd1e64") == 0x68fd1e64ULL);
  CHECK(CriteoTokenHash("FFFFFFFFFFFFFFFF") == ~uint64_t{0});
  CHECK(CriteoTokenHash("0") == 0);
  CHECK(CriteoTokenHash("a") == 0xa);
  CHECK(CriteoTokenHash("g") == 0xaf63da4c8601e926ULL);                    // FNV-1a("g")
  CHECK(CriteoTokenHash("00000000000000000") != CriteoTokenHash("0"));    // 17 digits: hashed
  CHECK(CriteoTokenHash("foo") == 0xdcb27518fed9d577ULL);                  // FNV-1a("foo")
}

TEST_CASE("data: reader parses known rows exactly") {
  TempDir dir;
  std::vector<std::string> ints = {"1", "-3", "0", "", "214", "5000", "", "", "", "", "", "", "7"};
  std::vector<std::string> tokens = Repeat("", 26);
  tokens[0] = "68fd1e64";
  tokens[5] = "zz-top";
  tokens[25] = "7baa9f1e";
  std::string text = CriteoRow("1", ints, tokens) + "\n" + CriteoRow("0", Repeat("", 13), Repeat("", 26)) +
                     "\r\n\n" + CriteoRow("0", Repeat("2", 13), Repeat("0a", 26));  // CRLF, blank, no final \n
  test::WriteText(dir.File("rows.tsv"), text);
  Batch all;
  uint64_t bad = 1;
  std::vector<std::string> messages;
  ReadWholeFile(dir.File("rows.tsv"), &all, &bad, &messages);
  CHECK(bad == 0);
  REQUIRE(all.num_examples == 3);
  CHECK(all.labels == std::vector<float>{1, 0, 0});

  CHECK(all.dense[0] == TransformDense(1));
  CHECK(all.dense[1] == doctest::Approx(-std::log1p(3.0)));
  CHECK(all.dense[2] == 0.0f);
  CHECK(all.dense[3] == 0.0f);  // empty integer
  CHECK(all.dense[4] == TransformDense(214));
  CHECK(all.dense[5] == doctest::Approx(std::log1p(5000.0)));
  CHECK(all.dense[12] == TransformDense(7));
  for (int j = 13; j < 26; ++j) CHECK(all.dense[static_cast<size_t>(j)] == 0.0f);
  for (int j = 26; j < 39; ++j) CHECK(all.dense[static_cast<size_t>(j)] == TransformDense(2));

  // Row 0: slots 0, 5, 25 hold one key each, the rest none. Row 1: no keys. Row 2: all 26.
  REQUIRE(all.keys.size() == 3 + 26);
  CHECK(all.keys[0] == SlotKey(0, 0x68fd1e64));
  CHECK(all.keys[1] == SlotKey(5, CriteoTokenHash("zz-top")));
  CHECK(all.keys[2] == SlotKey(25, 0x7baa9f1e));
  CHECK(all.offsets[1] == 1);
  CHECK(all.offsets[5] == 1);
  CHECK(all.offsets[6] == 2);
  CHECK(all.offsets[26] == 3);
  CHECK(all.offsets[52] == 3);  // the empty row
  for (int s = 0; s < 26; ++s) {
    CHECK(all.keys[static_cast<size_t>(3 + s)] == SlotKey(s, 0xa));
    CHECK(SlotOfKey(all.keys[static_cast<size_t>(3 + s)]) == s);
  }
  CHECK(all.offsets.back() == all.keys.size());
}

TEST_CASE("data: reader batches up to max_examples and ends with an empty batch") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 10; ++i) text += CriteoRow(i % 2 ? "1" : "0", Repeat("1", 13), Repeat("ab", 26)) + "\n";
  test::WriteGzip(dir.File("ten.tsv.gz"), text);
  ShardPlan plan;
  REQUIRE(PlanShards({dir.File("ten.tsv.gz")}, 1, 64, &plan).ok());
  ChunkReader reader(plan, 0, TsvSchema{});
  Batch batch;
  std::vector<int> sizes;
  for (;;) {
    REQUIRE(reader.Next(4, &batch).ok());
    CHECK(batch.offsets.size() == static_cast<size_t>(batch.num_examples * 26 + 1));
    CHECK(batch.dense.size() == static_cast<size_t>(batch.num_examples * 13));
    if (batch.num_examples == 0) break;
    sizes.push_back(batch.num_examples);
  }
  CHECK(sizes == std::vector<int>{4, 4, 2});
  CHECK(reader.lines_read() == 10);
  CHECK(reader.bytes_read() == text.size());
}

TEST_CASE("data: malformed rows are skipped, counted and reported as file:line") {
  TempDir dir;
  const std::string good = CriteoRow("1", Repeat("3", 13), Repeat("ab", 26));
  std::vector<std::string> lines = {
      good,                                                       // 1
      CriteoRow("1", Repeat("3", 13), Repeat("ab", 25)),          // 2: 39 columns
      "",                                                         // 3: blank, ignored
      CriteoRow("1", Repeat("3", 13), Repeat("ab", 27)),          // 4: 41 columns
      CriteoRow("2", Repeat("3", 13), Repeat("ab", 26)),          // 5: bad label
      good,                                                       // 6
      CriteoRow("0", {"1", "2", "x7", "", "", "", "", "", "", "", "", "", ""}, Repeat("", 26)),  // 7
      CriteoRow("0", Repeat("1.5", 13), Repeat("", 26)),          // 8: not an integer
      CriteoRow("", Repeat("1", 13), Repeat("", 26)),             // 9: empty label
      good,                                                       // 10
  };
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  const std::string path = dir.File("bad.tsv");
  test::WriteText(path, text);

  ShardPlan plan;
  REQUIRE(PlanShards({path}, 1, 64, &plan).ok());
  Batch all;
  uint64_t bad = 0;
  std::vector<std::string> messages;
  REQUIRE(ReadAll(plan, 0, &all, &bad, &messages).ok());
  CHECK(all.num_examples == 3);
  CHECK(bad == 6);
  REQUIRE(messages.size() == ChunkReader::kMaxBadRowMessages);
  CHECK(messages[0] == path + ":2: expected 40 columns, got 39");
  CHECK(messages[1] == path + ":4: expected 40 columns, got 41");
  CHECK(messages[2] == path + ":5: bad label '2' (must be 0 or 1)");
  CHECK(messages[3] == path + ":7: integer column I3 is not a number: 'x7'");
  CHECK(messages[4] == path + ":8: integer column I1 is not a number: '1.5'");

  // Split over workers, line numbers stay those of the file.
  REQUIRE(PlanShards({path}, 3, 3, &plan).ok());
  REQUIRE(ReadAll(plan, 2, &all, &bad, &messages).ok());  // lines 7..9
  CHECK(bad == 3);
  REQUIRE(messages.size() == 3);
  CHECK(messages[0] == path + ":7: integer column I3 is not a number: 'x7'");
  CHECK(messages[2] == path + ":9: bad label '' (must be 0 or 1)");
}

TEST_CASE("data: a label is 0 or 1, also as a decimal whose fraction is zeros") {
  for (const char* text : {"0", "1", "0.0", "1.0", "1.000", "0.", "1."}) {
    float label = -1;
    CAPTURE(text);
    CHECK(data_internal::ParseLabel(text, &label));
    CHECK(label == (text[0] == '1' ? 1.0f : 0.0f));
  }
  for (const char* text : {"", "2", "0.5", "1.01", "01", "10", "-1", "+1", "1e0", ".0", "1.0 ", "true"}) {
    float label = -1;
    CAPTURE(text);
    CHECK_FALSE(data_internal::ParseLabel(text, &label));
  }
  TempDir dir;
  const std::string path = dir.File("decimal.tsv");
  test::WriteText(path, CriteoRow("1.0", Repeat("3", 13), Repeat("ab", 26)) + "\n" +
                            CriteoRow("0.0", Repeat("3", 13), Repeat("ab", 26)) + "\n");
  Batch all;
  uint64_t bad = 1;
  std::vector<std::string> messages;
  ReadWholeFile(path, &all, &bad, &messages);
  CHECK(bad == 0);
  CHECK(all.labels == std::vector<float>{1, 0});
}

TEST_CASE("data: a file that shrank after planning is an I/O error") {
  TempDir dir;
  const std::string path = dir.File("shrink.tsv.gz");
  std::string row = CriteoRow("1", Repeat("3", 13), Repeat("ab", 26)) + "\n";
  test::WriteGzip(path, row + row + row + row);
  ShardPlan plan;
  REQUIRE(PlanShards({path}, 2, 2, &plan).ok());
  test::WriteGzip(path, row);
  ChunkReader reader(plan, 1, TsvSchema{});
  Batch batch;
  Status st = reader.Next(10, &batch);
  CHECK(st.code() == Status::Code::kIOError);
  CHECK(st.message().find(path) != std::string::npos);
}

TEST_CASE("data: the real Criteo sample parses with no bad rows") {
  const std::string path = "../shared/data/criteo-dac-w261-sample/criteo_dac_train_sample.tsv.gz";
  if (!std::filesystem::exists(path)) {
    MESSAGE("SKIP: " << path << " is absent");
    return;
  }
  ShardPlan plan;
  REQUIRE(PlanShards({path}, 1, 64, &plan).ok());
  CHECK(plan.total_lines() == 137120);
  ChunkReader reader(plan, 0, TsvSchema{});
  Batch batch;
  uint64_t examples = 0, clicks = 0, keys = 0;
  for (;;) {
    REQUIRE(reader.Next(4096, &batch).ok());
    if (batch.num_examples == 0) break;
    examples += static_cast<uint64_t>(batch.num_examples);
    for (float l : batch.labels) clicks += l > 0.5f ? 1 : 0;
    keys += batch.keys.size();
  }
  CHECK(examples == 137120);
  CHECK(clicks == 35211);
  CHECK(reader.bad_rows() == 0);
  CHECK(keys > examples * 20);  // most of the 26 slots are filled
}

}  // namespace strata
