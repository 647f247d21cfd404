// Schemas: the file syntax and its errors (file:line), and ChunkReader on a CSV with a
// header, string ids, a multi-hot column, a time column, bucketized and raw numbers, quoted
// fields, bad values at file:line and a header that does not match.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "data_test_files.h"
#include "strata/common/partition.h"
#include "strata/data/chunk_reader.h"
#include "strata/data/schema.h"

namespace strata {
namespace {

using test::TempDir;

constexpr const char* kAdsSchema = R"(# a test schema
delimiter comma
header yes
column id ignore
column clicked label
column ad categorical       # string ids
column recent_ads multihot | mean
column when time %Y-%m-%d %H:%M:%S
column price bucketize 1,10,100
column score numeric raw
column visits numeric log1p
)";

constexpr const char* kAdsHeader = "id,clicked,ad,recent_ads,when,price,score,visits\n";

Status Parse(const std::string& text, InputSchema* out) { return ParseSchema(text, "t.schema", out); }

std::string ErrorOf(const std::string& text) {
  InputSchema s;
  const Status st = Parse(text, &s);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  return st.message();
}

// The keys of example i's slot s.
std::vector<uint64_t> SlotKeys(const Batch& b, int i, int s) {
  const size_t at = static_cast<size_t>(i * b.num_slots + s);
  return std::vector<uint64_t>(b.keys.begin() + b.offsets[at], b.keys.begin() + b.offsets[at + 1]);
}

// One file planned for one worker, read whole.
struct OneFile {
  ShardPlan plan;
  std::unique_ptr<ChunkReader> reader;

  Status Read(const std::string& path, const InputSchema& schema, Batch* batch) {
    STRATA_RETURN_IF_ERROR(PlanShards({path}, 1, 64, &plan));
    reader = std::make_unique<ChunkReader>(plan, 0, schema);
    return reader->Next(1000, batch);
  }
};

}  // namespace

TEST_CASE("schema: columns get slots and dense features in file order") {
  InputSchema s;
  REQUIRE(Parse(kAdsSchema, &s).ok());
  CHECK(s.delimiter == ',');
  CHECK(s.header);
  CHECK(s.columns.size() == 8);
  CHECK(s.slot_names == std::vector<std::string>{"ad", "recent_ads", "when.hour", "when.weekday", "price"});
  CHECK(s.num_dense == 2);
  CHECK(s.columns[5].boundaries == std::vector<double>{1, 10, 100});
  CHECK(s.columns[4].time_format == "%Y-%m-%d %H:%M:%S");
  CHECK(s.columns[6].dense == 0);
  CHECK_FALSE(s.columns[6].log1p);
  CHECK(s.columns[7].dense == 1);
  CHECK(s.columns[4].line == 8);
  CHECK(s.columns[3].separator == '|');
  CHECK(s.columns[3].mean);
  CHECK(s.MeanSlots() == std::vector<int>{1});
}

TEST_CASE("schema: errors name the file and line") {
  CHECK(ErrorOf("column a label\ncolumn b colour\n") ==
        "t.schema:2: unknown role 'colour' (label, categorical, numeric, bucketize, multihot, time or ignore)");
  CHECK(ErrorOf("column a label\ncolumn a categorical\n") == "t.schema:2: column 'a' is named twice");
  CHECK(ErrorOf("column a label\ncolumn b numeric\n") == "t.schema:2: numeric needs a transform: log1p or raw");
  CHECK(ErrorOf("column a label\ncolumn b bucketize 5,2\n") == "t.schema:2: bucketize boundaries must ascend");
  CHECK(ErrorOf("column a label\ncolumn b bucketize 1,x\n") == "t.schema:2: bucketize boundary 'x' is not a finite number");
  CHECK(ErrorOf("column a label\ncolumn t time %H:%M\n").find("t.schema:2: time format '%H:%M' needs %H and %d") == 0);
  CHECK(ErrorOf("column a label\ncolumn t time %Y %q\n").find("t.schema:2: time format") == 0);
  CHECK(ErrorOf("column a label\ncolumn b categorical extra\n") == "t.schema:2: unexpected 'extra' after the role");
  CHECK(ErrorOf("column a label\ncolumn b multihot | max\n") == "t.schema:2: multihot pooling: sum or mean, not 'max'");
  CHECK(ErrorOf("separator comma\n") == "t.schema:1: unknown setting 'separator' (delimiter, header, width or column)");
  CHECK(ErrorOf("header maybe\n") == "t.schema:1: header: yes or no");
  CHECK(ErrorOf("column b categorical\n") == "t.schema: a schema needs exactly one label column, it has 0");
  CHECK(ErrorOf("column a label\ncolumn b numeric raw\n") == "t.schema: a schema needs at least one categorical column (a slot)");
  std::string many = "column y label\n";
  for (int i = 0; i < 256; ++i) many += "column c" + std::to_string(i) + " categorical\n";
  CHECK(ErrorOf(many) == "t.schema: 256 slots, at most 255");
  InputSchema s;
  CHECK(ReadSchemaFile("no/such.schema", &s).message() == "cannot open schema file no/such.schema");
}

TEST_CASE("schema: slots of several widths are unit slots of the widths' greatest common divisor") {
  InputSchema s;
  REQUIRE(Parse("width 8\ncolumn y label\ncolumn ad categorical width 24\ncolumn n numeric raw\n"
                "column recent multihot | mean width 16\ncolumn t time %Y-%m-%d %H width 8\ncolumn p bucketize 1,10\n",
                &s).ok());
  CHECK(s.unit_width == 8);
  CHECK(s.MixedWidths());
  CHECK(s.slot_names == std::vector<std::string>{"ad/0", "ad/1", "ad/2", "recent/0", "recent/1", "t.hour", "t.weekday", "p"});
  CHECK(s.columns[1].units == 3);
  CHECK(s.columns[3].slot == 3);
  CHECK(s.columns[4].time_format == "%Y-%m-%d %H");
  CHECK(s.columns[5].width == 8);  // the `width` setting
  CHECK(s.MeanSlots() == std::vector<int>{3, 4});
  CHECK(s.WidthsText() == "slots 8..24 wide: 8 unit slots of 8 floats");

  InputSchema same;
  REQUIRE(Parse("width 16\ncolumn y label\ncolumn a categorical\ncolumn b categorical width 16\n", &same).ok());
  CHECK(same.unit_width == 16);
  CHECK_FALSE(same.MixedWidths());
  CHECK(same.slot_names == std::vector<std::string>{"a", "b"});
  CHECK(same.WidthsText() == "slots 16 wide");
  InputSchema none;
  REQUIRE(Parse("column y label\ncolumn a categorical\n", &none).ok());
  CHECK(none.unit_width == 0);
  CHECK(none.WidthsText().empty());
}

TEST_CASE("schema: width errors name the file and line") {
  CHECK(ErrorOf("column a label\ncolumn b numeric raw width 4\n") == "t.schema:2: width is for columns that feed slots");
  CHECK(ErrorOf("column a label\ncolumn b categorical width 0\n") == "t.schema:2: width '0' is not an integer in [1, 1024]");
  CHECK(ErrorOf("column a label\ncolumn b categorical width 8x\n") == "t.schema:2: width '8x' is not an integer in [1, 1024]");
  CHECK(ErrorOf("width 8\nwidth 8\n") == "t.schema:2: the width is set twice");
  CHECK(ErrorOf("column a label\ncolumn b categorical\ncolumn c categorical width 8\n") ==
        "t.schema:2: column b has no width while others have one: end its line with 'width N', or give every such "
        "slot one with a 'width N' line");
  std::string many = "column y label\ncolumn narrow categorical width 1\n";
  for (int i = 0; i < 16; ++i) many += "column c" + std::to_string(i) + " categorical width 16\n";
  CHECK(ErrorOf(many) == "t.schema: 257 unit slots of 1 floats (a slot of width w is w / 1 of them), at most 255: "
                         "choose widths with a larger common divisor");
}

TEST_CASE("schema: a slot of several units gives each unit the token's key in its own slot") {
  TempDir dir;
  InputSchema s;
  REQUIRE(Parse("delimiter comma\nwidth 4\ncolumn y label\ncolumn ad categorical width 8\n"
                "column recent multihot | width 12\ncolumn t time %Y-%m-%d %H width 8\n",
                &s).ok());
  test::WriteText(dir.File("w.csv"), "1,shoe,a|b,2017-11-06 16\n0,,,\n");
  Batch b;
  OneFile file;
  REQUIRE(file.Read(dir.File("w.csv"), s, &b).ok());
  REQUIRE(b.num_slots == 9);
  const uint64_t shoe = CriteoTokenHash("shoe");
  CHECK(SlotKeys(b, 0, 0) == std::vector<uint64_t>{SlotKey(0, shoe)});
  CHECK(SlotKeys(b, 0, 1) == std::vector<uint64_t>{SlotKey(1, shoe)});
  for (int unit = 0; unit < 3; ++unit) {
    CHECK(SlotKeys(b, 0, 2 + unit) == std::vector<uint64_t>{SlotKey(2 + unit, 0xa), SlotKey(2 + unit, 0xb)});
  }
  CHECK(SlotKeys(b, 0, 5) == std::vector<uint64_t>{SlotKey(5, 16)});
  CHECK(SlotKeys(b, 0, 6) == std::vector<uint64_t>{SlotKey(6, 16)});
  CHECK(SlotKeys(b, 0, 7) == std::vector<uint64_t>{SlotKey(7, 1)});  // a Monday
  CHECK(SlotKeys(b, 0, 8) == std::vector<uint64_t>{SlotKey(8, 1)});
  for (int slot = 0; slot < 9; ++slot) CHECK(SlotKeys(b, 1, slot).empty());
  CHECK(WithSlot(SlotKey(3, shoe), 200) == SlotKey(200, shoe));
}

TEST_CASE("schema: the Criteo layout is 26 slots and 13 dense features; without its label, 39 columns") {
  const InputSchema s = CriteoSchema();
  CHECK(s.criteo);
  CHECK(s.num_slots() == 26);
  CHECK(s.num_dense == 13);
  CHECK(s.slot_names.front() == "C1");
  const InputSchema u = WithoutLabel(s);
  CHECK_FALSE(u.criteo);
  CHECK(u.columns.size() == 39);
  CHECK(u.columns.front().name == "I1");
  CHECK(u.slot_names == s.slot_names);
  CHECK(u.num_dense == 13);
}

TEST_CASE("schema: a CSV with a header, string ids, multi-hot, time, buckets and numbers") {
  TempDir dir;
  InputSchema s;
  REQUIRE(Parse(kAdsSchema, &s).ok());
  test::WriteText(dir.File("ads.csv"), std::string(kAdsHeader) +
                                           "r1,1,shoe-42,a|b||c,2017-11-06 16:00:09,25,-1.5,3\n"
                                           "r2,0,\"hat, red\",,,,,\n");
  Batch b;
  OneFile file;
  REQUIRE(file.Read(dir.File("ads.csv"), s, &b).ok());
  REQUIRE(b.num_examples == 2);
  CHECK(b.labels == std::vector<float>{1, 0});
  CHECK(SlotKeys(b, 0, 0) == std::vector<uint64_t>{SlotKey(0, CriteoTokenHash("shoe-42"))});
  CHECK(SlotKeys(b, 0, 1) == std::vector<uint64_t>{SlotKey(1, 0xa), SlotKey(1, 0xb), SlotKey(1, 0xc)});
  CHECK(SlotKeys(b, 0, 2) == std::vector<uint64_t>{SlotKey(2, 16)});  // 16:00
  CHECK(SlotKeys(b, 0, 3) == std::vector<uint64_t>{SlotKey(3, 1)});   // 2017-11-06 was a Monday
  CHECK(SlotKeys(b, 0, 4) == std::vector<uint64_t>{SlotKey(4, 2)});   // 10 <= 25 < 100
  CHECK(b.dense[0] == -1.5f);
  CHECK(b.dense[1] == TransformDense(3));
  CHECK(SlotKeys(b, 1, 0) == std::vector<uint64_t>{SlotKey(0, CriteoTokenHash("hat, red"))});  // quoted
  for (int slot = 1; slot < 5; ++slot) CHECK(SlotKeys(b, 1, slot).empty());                     // missing
  CHECK(b.dense[2] == 0.0f);
  CHECK(b.dense[3] == TransformDense(0));
}

// Avazu's hour column: a two-digit year, then month, day and hour, no separators.
TEST_CASE("schema: a time format with a two-digit year gives the hour and the weekday") {
  TempDir dir;
  InputSchema s;
  REQUIRE(Parse("delimiter comma\nheader yes\ncolumn click label\ncolumn hour time %y%m%d%H\n", &s).ok());
  test::WriteText(dir.File("a.csv"), "click,hour\n1,14102123\n0,1410211\n");
  Batch b;
  OneFile file;
  REQUIRE(file.Read(dir.File("a.csv"), s, &b).ok());
  REQUIRE(b.num_examples == 1);
  CHECK(SlotKeys(b, 0, 0) == std::vector<uint64_t>{SlotKey(0, 23)});
  CHECK(SlotKeys(b, 0, 1) == std::vector<uint64_t>{SlotKey(1, 2)});  // 2014-10-21 was a Tuesday
  CHECK(file.reader->bad_rows() == 1);                                 // one digit short
}

TEST_CASE("schema: bad values are skipped rows reported at file:line") {
  TempDir dir;
  InputSchema s;
  REQUIRE(Parse(kAdsSchema, &s).ok());
  const std::string path = dir.File("bad.csv");
  test::WriteText(path, std::string(kAdsHeader) +
                            "r1,1,a,,2017-11-06 16:00:09,25,1,3\n"
                            "r2,yes,a,,2017-11-06 16:00:09,25,1,3\n"
                            "r3,0,a,,2017-11-06,25,1,3\n"
                            "r4,0,a,,2017-11-06 16:00:09,cheap,1,3\n"
                            "r5,0,a,,2017-11-06 16:00:09,25,inf,3\n"
                            "r6,0,a,,2017-11-06 16:00:09,25,1\n"
                            "r7,0.5,a,,2017-11-06 16:00:09,25,1,3\n"
                            "r8,1.00,a,,2017-11-06 16:00:09,25,1,3\n"
                            "r9,0.,a,,2017-11-06 16:00:09,25,1,3\n");
  Batch b;
  OneFile file;
  REQUIRE(file.Read(path, s, &b).ok());
  CHECK(b.num_examples == 3);  // r1, and r8 and r9: labels written as decimals
  CHECK(b.labels == std::vector<float>{1, 1, 0});
  CHECK(file.reader->bad_rows() == 6);  // r2 to r7: r7's label 0.5 is neither 0 nor 1
  const std::vector<std::string>& m = file.reader->bad_row_messages();
  REQUIRE(m.size() == 5);  // the first kMaxBadRowMessages
  CHECK(m[0] == path + ":3: bad label 'yes' in column clicked (must be 0 or 1)");
  CHECK(m[1] == path + ":4: column when: '2017-11-06' does not match the time format '%Y-%m-%d %H:%M:%S'");
  CHECK(m[2] == path + ":5: column price is not a finite number: 'cheap'");
  CHECK(m[3] == path + ":6: column score is not a finite number: 'inf'");
  CHECK(m[4] == path + ":7: expected 8 columns, got 7");
}

TEST_CASE("schema: a header that does not match fails the read, naming file and schema line") {
  TempDir dir;
  InputSchema s;
  REQUIRE(Parse(kAdsSchema, &s).ok());
  const std::string path = dir.File("other.csv");
  test::WriteText(path, "id,clicked,ad,recent,when,price,score,visits\nr1,1,a,,,,,\n");
  Batch b;
  OneFile file;
  const Status st = file.Read(path, s, &b);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message() == path + ":1: the header names column 4 'recent', the schema 'recent_ads' (t.schema:7)");
  ShardPlan plan;
  REQUIRE(PlanShards({path}, 1, 64, &plan).ok());
  CHECK(CheckHeaders(plan, s).message() == st.message());
  test::WriteText(path, "id,clicked,ad\n");
  REQUIRE(PlanShards({path}, 1, 64, &plan).ok());
  CHECK(CheckHeaders(plan, s).message() == path + ":1: the header ends before column 'recent_ads' (t.schema:7)");
}

}  // namespace strata
