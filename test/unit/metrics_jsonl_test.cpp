// JSON-lines output: doubles round-trip bit for bit through strtod, integers are exact,
// strings are escaped, and the writer appends flushed lines and names a file it cannot open.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "strata/common/partition.h"
#include "strata/metrics/jsonl.h"

namespace strata {
namespace {

// The text after "x": in {"x":...}.
std::string ValueOf(const JsonRecord& r) {
  const std::string s = r.ToString();
  REQUIRE(s.rfind("{\"x\":", 0) == 0);
  REQUIRE(s.back() == '}');
  return s.substr(5, s.size() - 6);
}

TEST_CASE("metrics: JsonRecord doubles round-trip bit for bit") {
  std::vector<double> values = {0.1, 1.0 / 3, -0.0, 0.0, 1e-300, 4.9406564584124654e-324,
                                std::numeric_limits<double>::max(), 0.78123456789012345, -2.5e17};
  for (uint64_t k = 0; k < 200; ++k) {
    double d;
    // Random mantissa and sign, exponents spread around 2^0.
    const uint64_t bits = (Mix64(k) & ~(uint64_t{0x7ff} << 52)) | (uint64_t{1003 + k % 40} << 52);
    std::memcpy(&d, &bits, sizeof(d));
    values.push_back(d);
  }
  for (double v : values) {
    JsonRecord r;
    r.Add("x", v);
    const std::string text = ValueOf(r);
    const double back = std::strtod(text.c_str(), nullptr);
    INFO(text);
    CHECK(std::memcmp(&back, &v, sizeof(v)) == 0);
  }
  JsonRecord third;
  third.Add("x", 1.0 / 3);
  CHECK(ValueOf(third) == "0.33333333333333331");  // 17 significant digits
}

TEST_CASE("metrics: JsonRecord integers, strings, booleans and non-finite values") {
  JsonRecord r;
  r.Add("i", std::numeric_limits<int64_t>::min())
      .Add("u", std::numeric_limits<uint64_t>::max())
      .Add("n", 42)
      .Add("b", true)
      .Add("s", "a\"b\\c\n\t\x01 é")
      .Add("nan", std::nan(""))
      .Add("inf", -std::numeric_limits<double>::infinity());
  CHECK(r.ToString() ==
        "{\"i\":-9223372036854775808,\"u\":18446744073709551615,\"n\":42,\"b\":true,"
        "\"s\":\"a\\\"b\\\\c\\n\\t\\u0001 é\",\"nan\":null,\"inf\":null}");
  CHECK(JsonRecord().ToString() == "{}");
}

TEST_CASE("metrics: JsonlWriter appends one flushed record per line") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("strata-jsonl-test-" + std::to_string(::getpid()) + ".jsonl");
  {
    JsonlWriter w;
    REQUIRE(w.Open(path.string()).ok());
    CHECK(w.Write(JsonRecord().Add("pass", 1).Add("auc", 0.5)).ok());
    // Flushed: readable before the writer closes.
    std::ifstream early(path);
    std::string first;
    std::getline(early, first);
    CHECK(first == "{\"pass\":1,\"auc\":0.5}");
    CHECK(w.Write(JsonRecord().Add("pass", 2)).ok());
  }
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  CHECK(lines == std::vector<std::string>{"{\"pass\":1,\"auc\":0.5}", "{\"pass\":2}"});
  std::filesystem::remove(path);
}

TEST_CASE("metrics: JsonlWriter names the file it cannot open") {
  JsonlWriter w;
  const Status st = w.Open("no-such-dir/metrics.jsonl");
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("no-such-dir/metrics.jsonl") != std::string::npos);
}

}  // namespace
}  // namespace strata
