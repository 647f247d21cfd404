// LineReader on plain and gzip text: a UTF-8 byte order mark before a file's first line is
// dropped, and only there; a range that starts inside the file keeps its bytes as they are.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data/line_reader.h"
#include "data_test_files.h"

namespace strata {
namespace {

using data_internal::LineReader;
using test::TempDir;

constexpr char kBom[] = "\xEF\xBB\xBF";

std::vector<std::string> Lines(const std::string& path, FileEncoding encoding, uint64_t begin = 0) {
  LineReader reader(16);
  REQUIRE(reader.Open(path, encoding, begin).ok());
  std::vector<std::string> lines;
  for (;;) {
    std::string_view line;
    bool has_line = false;
    REQUIRE(reader.Next(&line, &has_line).ok());
    if (!has_line) return lines;
    lines.emplace_back(line);
  }
}

TEST_CASE("line reader: a byte order mark before the first line is dropped, and only there") {
  TempDir dir;
  const std::string text = std::string(kBom) + "id,click\r\n" + kBom + "second\nthird\n";
  test::WriteText(dir.File("bom.csv"), text);
  test::WriteGzip(dir.File("bom.csv.gz"), text);
  const std::vector<std::string> want = {"id,click", std::string(kBom) + "second", "third"};
  CHECK(Lines(dir.File("bom.csv"), FileEncoding::kPlain) == want);
  CHECK(Lines(dir.File("bom.csv.gz"), FileEncoding::kGzip) == want);
  // A range that starts at the second line: its first line is not the file's.
  const uint64_t second = 3 + std::string("id,click\r\n").size();
  CHECK(Lines(dir.File("bom.csv"), FileEncoding::kPlain, second) ==
        std::vector<std::string>{std::string(kBom) + "second", "third"});
  // A file with only a mark, and one without.
  test::WriteText(dir.File("only.csv"), kBom);
  CHECK(Lines(dir.File("only.csv"), FileEncoding::kPlain) == std::vector<std::string>{""});
  test::WriteText(dir.File("plain.csv"), "a\nb\n");
  CHECK(Lines(dir.File("plain.csv"), FileEncoding::kPlain) == std::vector<std::string>{"a", "b"});
}

}  // namespace
}  // namespace strata
