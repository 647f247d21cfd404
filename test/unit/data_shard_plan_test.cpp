// ShardPlan and ExpandInputs: every line read exactly once, in stripes dealt out in turn,
// for several worker counts and stripe sizes over plain, gzip and unterminated files, or in
// whole files dealt out in turn; a contiguous plan equals the striped plan of its stripe
// size; a step's batches are one reader's consecutive lines; plans depend only on (files, W, S);
// wire round trip; clear errors for missing, unmatched and empty inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>

#include "data_test_files.h"
#include "strata/common/partition.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/input_files.h"
#include "strata/data/shard_plan.h"

namespace strata {
namespace {

using test::TempDir;

// One-slot, one-integer rows; the token of global line g is hex(g + 1), so a key names its line.
std::string Rows(int first, int count, bool trailing_newline = true) {
  std::string text;
  for (int g = first; g < first + count; ++g) {
    char row[64];
    std::snprintf(row, sizeof(row), "%d\t%d\t%x", g % 2, g, g + 1);
    text += row;
    if (g + 1 < first + count || trailing_newline) text += '\n';
  }
  return text;
}

constexpr TsvSchema kTinySchema{1, 1};

// Files of 10 (plain), 0 (empty), 7 (gzip), 3 (gzip without the .gz name) and 5 (plain, no
// final newline) lines: 25 in all, in this order.
std::vector<std::string> MakeInputs(const TempDir& dir) {
  test::WriteText(dir.File("a.tsv"), Rows(0, 10));
  test::WriteText(dir.File("b.tsv"), "");
  test::WriteGzip(dir.File("c.tsv.gz"), Rows(10, 7));
  test::WriteGzip(dir.File("d.tsv"), Rows(17, 3));
  test::WriteText(dir.File("e.tsv"), Rows(20, 5, false));
  return {dir.File("a.tsv"), dir.File("b.tsv"), dir.File("c.tsv.gz"), dir.File("d.tsv"), dir.File("e.tsv")};
}

// The global line whose row holds `key`; -1 for none of the first 1000.
int LineOfKey(uint64_t key) {
  for (int g = 0; g < 1000; ++g) {
    if (SlotKey(0, static_cast<uint64_t>(g + 1)) == key) return g;
  }
  return -1;
}

// Global line indices that worker w reads, in reading order.
std::vector<int> ReadChunk(const ShardPlan& plan, int w) {
  ChunkReader reader(plan, w, kTinySchema);
  Batch batch;
  std::vector<int> lines;
  for (;;) {
    REQUIRE(reader.Next(3, &batch).ok());
    if (batch.num_examples == 0) break;
    for (uint64_t key : batch.keys) lines.push_back(LineOfKey(key));
  }
  CHECK(reader.bad_rows() == 0);
  return lines;
}

}  // namespace

TEST_CASE("data: plan covers every line exactly once, stripe k going to worker k mod W") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  for (int workers : {1, 2, 3, 4, 7}) {
    for (int stripe : {1, 3, 4, 25, 100}) {
      CAPTURE(workers);
      CAPTURE(stripe);
      ShardPlan plan;
      REQUIRE(PlanShards(files, workers, static_cast<uint64_t>(stripe), &plan).ok());
      REQUIRE(plan.total_lines() == 25);
      REQUIRE(plan.num_workers() == workers);
      for (int w = 0; w < workers; ++w) {
        std::vector<int> expected;
        for (int g = 0; g < 25; ++g) {
          if (g / stripe % workers == w) expected.push_back(g);
        }
        CHECK(plan.chunk_lines(w) == expected.size());
        CHECK(ReadChunk(plan, w) == expected);
      }
    }
  }
}

TEST_CASE("data: contiguous chunks are stripes of ceil(N / W) lines") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  ShardPlan plan;
  REQUIRE(PlanShards(files, 4, kContiguousChunks, &plan).ok());
  CHECK(plan.stripe_lines() == 7);
  std::vector<int> all;
  for (int w = 0; w < 4; ++w) {
    const std::vector<int> lines = ReadChunk(plan, w);
    all.insert(all.end(), lines.begin(), lines.end());
  }
  std::vector<int> in_order(25);
  std::iota(in_order.begin(), in_order.end(), 0);
  CHECK(all == in_order);  // worker order is input order
}

TEST_CASE("data: a contiguous plan is the striped plan of its stripe size") {
  // Plain files of several thousand lines, where the contiguous plan finds its stripe
  // starts from the marks its counting scan left (every 4096th line), beside a gzip file
  // and a plain file without a final newline: the same plan as one scan noting them.
  TempDir dir;
  test::WriteText(dir.File("a.tsv"), Rows(0, 9000));
  test::WriteGzip(dir.File("b.tsv.gz"), Rows(9000, 5000));
  test::WriteText(dir.File("c.tsv"), Rows(14000, 12289, false));
  test::WriteText(dir.File("d.tsv"), Rows(26289, 4096));
  const std::vector<std::string> files = {dir.File("a.tsv"), dir.File("b.tsv.gz"), dir.File("c.tsv"),
                                          dir.File("d.tsv")};
  for (int workers : {1, 2, 3, 7, 64}) {
    CAPTURE(workers);
    ShardPlan contiguous, striped;
    REQUIRE(PlanShards(files, workers, kContiguousChunks, &contiguous).ok());
    REQUIRE(PlanShards(files, workers, contiguous.stripe_lines(), &striped).ok());
    CHECK(contiguous.stripe_lines() == (30385 + workers - 1) / workers);
    CHECK(contiguous.Serialize() == striped.Serialize());
  }
}

TEST_CASE("data: whole files dealt out in turn: file k, all its lines, to worker k mod W") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  const int first_line[] = {0, 10, 10, 17, 20, 25};  // of each file, and the end
  for (int workers : {1, 2, 3, 5}) {
    CAPTURE(workers);
    ShardPlan plan;
    REQUIRE(PlanWholeFiles(files, workers, &plan).ok());
    CHECK(plan.whole_files());
    REQUIRE(plan.total_lines() == 25);
    for (int w = 0; w < workers; ++w) {
      std::vector<int> expected;
      for (int f = w; f < 5; f += workers) {
        for (int g = first_line[f]; g < first_line[f + 1]; ++g) expected.push_back(g);
      }
      CHECK(plan.chunk_lines(w) == expected.size());
      CHECK(ReadChunk(plan, w) == expected);
    }
    ShardPlan back;
    REQUIRE(ShardPlan::Deserialize(plan.Serialize(), &back).ok());
    CHECK(back == plan);
    CHECK(DescribeInput(plan).find(workers > 1 ? "in whole files dealt out in turn" : "25 lines, id") != std::string::npos);
  }
}

TEST_CASE("data: a step's batches, one from each worker, are one reader's consecutive lines") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  constexpr int kWorkers = 3;
  constexpr int kBatch = 4;
  ShardPlan plan;
  REQUIRE(PlanShards(files, kWorkers, kBatch, &plan).ok());
  std::vector<std::unique_ptr<ChunkReader>> readers;
  for (int w = 0; w < kWorkers; ++w) readers.push_back(std::make_unique<ChunkReader>(plan, w, kTinySchema));
  std::vector<int> read;
  for (int step = 0; step < 3; ++step) {
    for (auto& reader : readers) {
      Batch batch;
      REQUIRE(reader->Next(kBatch, &batch).ok());
      for (uint64_t key : batch.keys) read.push_back(LineOfKey(key));
    }
  }
  std::vector<int> in_order(25);
  std::iota(in_order.begin(), in_order.end(), 0);
  CHECK(read == in_order);
}

TEST_CASE("data: plain pieces start and end on line boundaries") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  ShardPlan plan;
  REQUIRE(PlanShards(files, 7, 3, &plan).ok());
  CHECK(plan.files()[2].encoding == FileEncoding::kGzip);
  CHECK(plan.files()[3].encoding == FileEncoding::kGzip);  // detected by magic bytes, not by name
  CHECK(plan.files()[4].encoding == FileEncoding::kPlain);
  for (int w = 0; w < 7; ++w) {
    for (const ShardPiece& p : plan.chunk(w)) {
      const InputFile& f = plan.files()[p.file];
      if (f.encoding == FileEncoding::kGzip) {
        CHECK(p.begin_byte == 0);
        CHECK(p.end_byte == 0);
        continue;
      }
      std::string text = test::ReadBytes(f.path);
      CHECK((p.begin_byte == 0 || text[p.begin_byte - 1] == '\n'));
      CHECK((p.end_byte == text.size() || text[p.end_byte - 1] == '\n'));
      std::string piece = text.substr(p.begin_byte, p.end_byte - p.begin_byte);
      uint64_t newlines = static_cast<uint64_t>(std::count(piece.begin(), piece.end(), '\n'));
      CHECK(newlines + (piece.back() != '\n' ? 1 : 0) == p.num_lines);
    }
  }
}

TEST_CASE("data: plan depends only on files, W and S, and survives the wire") {
  TempDir dir;
  std::vector<std::string> files = MakeInputs(dir);
  ShardPlan a, b, c;
  REQUIRE(PlanShards(files, 4, 3, &a).ok());
  REQUIRE(PlanShards(files, 4, 3, &b).ok());
  CHECK(a == b);
  REQUIRE(PlanShards(files, 4, 2, &b).ok());
  CHECK_FALSE(a == b);
  CHECK(DescribeInput(a).find("25 lines in stripes of 3, id ") != std::string::npos);
  REQUIRE(PlanShards(files, 1, 3, &b).ok());
  CHECK(DescribeInput(b).find("25 lines, id ") != std::string::npos);  // one worker: stripes change nothing
  std::string wire = a.Serialize();
  REQUIRE(ShardPlan::Deserialize(wire, &c).ok());
  CHECK(c == a);
  CHECK(c.Serialize() == wire);

  ShardPlan bad;
  CHECK(ShardPlan::Deserialize(wire.substr(0, wire.size() - 1), &bad).code() == Status::Code::kCorruption);
  CHECK(ShardPlan::Deserialize(wire + "x", &bad).code() == Status::Code::kCorruption);
  CHECK(ShardPlan::Deserialize("", &bad).code() == Status::Code::kCorruption);
  std::string flipped = wire;
  flipped[0] = 'X';
  CHECK(ShardPlan::Deserialize(flipped, &bad).code() == Status::Code::kCorruption);
}

TEST_CASE("data: input expansion of files and globs") {
  TempDir dir;
  MakeInputs(dir);
  std::vector<std::string> files;
  REQUIRE(ExpandInputs({dir.File("e.tsv"), dir.File("[a-c].tsv*")}, &files).ok());
  CHECK(files == std::vector<std::string>{dir.File("e.tsv"), dir.File("a.tsv"), dir.File("b.tsv"),
                                          dir.File("c.tsv.gz")});
  FileEncoding encoding = FileEncoding::kParquet;
  REQUIRE(DetectEncoding(dir.File("a.tsv"), &encoding).ok());
  CHECK(encoding == FileEncoding::kPlain);
  REQUIRE(DetectEncoding(dir.File("d.tsv"), &encoding).ok());
  CHECK(encoding == FileEncoding::kGzip);
  REQUIRE(DetectEncoding(dir.File("b.tsv"), &encoding).ok());
  CHECK(encoding == FileEncoding::kPlain);
}

TEST_CASE("data: a directory stands for its data files in name order") {
  TempDir dir;
  const std::string out = dir.File("out");
  std::filesystem::create_directories(out + "/nested");
  for (const char* name : {"part-00001.tsv", "part-00000.tsv", "_SUCCESS", ".part-00000.tsv.crc", "nested/x.tsv"}) {
    test::WriteText(out + "/" + name, "0\n");
  }
  std::filesystem::create_symlink(out + "/part-00000.tsv", out + "/part-00002.tsv");
  std::vector<std::string> files;
  REQUIRE(ExpandInputs({out, dir.File("o*/")}, &files).ok());  // named, and matched by a glob
  const std::vector<std::string> parts = {out + "/part-00000.tsv", out + "/part-00001.tsv", out + "/part-00002.tsv"};
  std::vector<std::string> twice = parts;
  twice.insert(twice.end(), parts.begin(), parts.end());
  CHECK(files == twice);

  std::filesystem::create_directories(dir.File("markers"));
  test::WriteText(dir.File("markers/_SUCCESS"), "");
  const Status st = ExpandInputs({dir.File("markers")}, &files);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("markers holds no data files") != std::string::npos);
  CHECK(files == twice);  // nothing appended on an error
}

TEST_CASE("data: missing, unmatched and empty inputs give errors naming them") {
  TempDir dir;
  std::vector<std::string> files;
  Status st = ExpandInputs({dir.File("missing.tsv")}, &files);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("missing.tsv") != std::string::npos);
  CHECK(files.empty());

  st = ExpandInputs({dir.File("part-*.tsv")}, &files);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("part-*.tsv") != std::string::npos);

  st = ExpandInputs({dir.path()}, &files);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("directory") != std::string::npos);

  test::WriteText(dir.File("empty1.tsv"), "");
  test::WriteGzip(dir.File("empty2.tsv.gz"), "");
  ShardPlan plan;
  st = PlanShards({dir.File("empty1.tsv"), dir.File("empty2.tsv.gz")}, 2, 8, &plan);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message() == "no examples in " + dir.File("empty1.tsv") + ", " + dir.File("empty2.tsv.gz"));

  test::WriteText(dir.File("one.tsv"), "1\t2\t3\n");
  CHECK(PlanShards({dir.File("one.tsv")}, 0, 8, &plan).code() == Status::Code::kInvalidArgument);
  CHECK(PlanShards({}, 1, 8, &plan).code() == Status::Code::kInvalidArgument);
  st = PlanShards({dir.File("gone.tsv")}, 1, 8, &plan);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("gone.tsv") != std::string::npos);
}

TEST_CASE("data: more workers than lines leaves the extra chunks empty") {
  TempDir dir;
  test::WriteText(dir.File("two.tsv"), Rows(0, 2));
  ShardPlan plan;
  REQUIRE(PlanShards({dir.File("two.tsv")}, 5, 1, &plan).ok());
  uint64_t lines = 0;
  for (int w = 0; w < 5; ++w) lines += plan.chunk_lines(w);
  CHECK(lines == 2);
  CHECK(plan.chunk(4).empty());
  ChunkReader reader(plan, 4, kTinySchema);
  Batch batch;
  REQUIRE(reader.Next(8, &batch).ok());
  CHECK(batch.num_examples == 0);
}

}  // namespace strata
