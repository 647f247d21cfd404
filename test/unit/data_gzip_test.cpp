// LineReader on gzip input: concatenated members read as one file; a file cut inside a
// member and bytes after the last member are errors that name the file and the offset.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data/line_reader.h"
#include "data_test_files.h"

namespace strata {
namespace {

using data_internal::LineReader;
using test::TempDir;

std::string Lines(int first, int count) {
  std::string text;
  for (int i = first; i < first + count; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

// Reads every line of path; returns the reader's status and the lines read until then.
Status ReadAll(const std::string& path, std::vector<std::string>* lines) {
  LineReader reader(64);  // small, so the buffer grows and refills many times
  STRATA_RETURN_IF_ERROR(reader.Open(path, FileEncoding::kGzip));
  for (;;) {
    std::string_view line;
    bool has_line = false;
    STRATA_RETURN_IF_ERROR(reader.Next(&line, &has_line));
    if (!has_line) return Status::OK();
    lines->emplace_back(line);
  }
}

TEST_CASE("gzip: concatenated members are one file") {
  TempDir dir;
  test::WriteGzip(dir.File("a.gz"), Lines(0, 3000));
  test::WriteGzip(dir.File("b.gz"), Lines(3000, 5));
  test::WriteText(dir.File("ab.gz"), test::ReadBytes(dir.File("a.gz")) + test::ReadBytes(dir.File("b.gz")));
  std::vector<std::string> lines;
  REQUIRE(ReadAll(dir.File("ab.gz"), &lines).ok());
  REQUIRE(lines.size() == 3005);
  CHECK(lines.front() == "line 0");
  CHECK(lines.back() == "line 3004");
}

TEST_CASE("gzip: a file cut inside a member is truncated, not shorter") {
  TempDir dir;
  test::WriteGzip(dir.File("full.gz"), Lines(0, 20000));
  const std::string bytes = test::ReadBytes(dir.File("full.gz"));
  for (size_t keep : {size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(keep);
    test::WriteText(dir.File("cut.gz"), bytes.substr(0, keep));
    std::vector<std::string> lines;
    const Status st = ReadAll(dir.File("cut.gz"), &lines);
    CHECK(st.code() == Status::Code::kCorruption);
    CHECK(st.message().find(dir.File("cut.gz") + ": truncated gzip data") != std::string::npos);
    CHECK(st.message().find("at byte " + std::to_string(keep)) != std::string::npos);
  }
}

TEST_CASE("gzip: bytes after the last member are refused with their offset") {
  TempDir dir;
  test::WriteGzip(dir.File("a.gz"), Lines(0, 100));
  const std::string bytes = test::ReadBytes(dir.File("a.gz"));
  for (const std::string& tail : {std::string("x"), std::string("garbage\n"), std::string(4096, '\0')}) {
    test::WriteText(dir.File("tail.gz"), bytes + tail);
    std::vector<std::string> lines;
    const Status st = ReadAll(dir.File("tail.gz"), &lines);
    CHECK(st.code() == Status::Code::kCorruption);
    CHECK(st.message().find("data after the end of the gzip stream, at byte " + std::to_string(bytes.size())) !=
          std::string::npos);
  }
}

TEST_CASE("gzip: damaged compressed bytes are bad data") {
  TempDir dir;
  test::WriteGzip(dir.File("a.gz"), Lines(0, 5000));
  std::string bytes = test::ReadBytes(dir.File("a.gz"));
  for (size_t i = 20; i < 60; ++i) bytes[i] = static_cast<char>(0xff);
  test::WriteText(dir.File("bad.gz"), bytes);
  std::vector<std::string> lines;
  const Status st = ReadAll(dir.File("bad.gz"), &lines);
  CHECK(st.code() == Status::Code::kCorruption);
  CHECK(st.message().find(dir.File("bad.gz") + ": bad gzip data near byte") != std::string::npos);
}

}  // namespace
}  // namespace strata
