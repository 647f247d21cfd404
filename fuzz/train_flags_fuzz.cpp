// libFuzzer target: strata-train's flag parser and config-file reader. The input's first
// line is a config file's text; the remaining lines are command-line arguments (after
// `--train x --config FILE`). Any input must parse or be refused with a message, never
// crash, and a refusal must come with a message.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "strata/train/options.h"

namespace {

// A config file this process rewrites for every input.
const std::string& ConfigPath() {
  static const std::string path = "/tmp/strata-fuzz-flags-" + std::to_string(::getpid()) + ".flags";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t first_break = all.find('\n');
  const std::string_view config = all.substr(0, first_break == std::string_view::npos ? all.size() : first_break);
  std::FILE* f = std::fopen(ConfigPath().c_str(), "w");
  if (f == nullptr) return 0;
  std::string text(config);
  for (char& c : text) c = c == ';' ? '\n' : c;  // `;` separates the config file's lines
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  std::vector<std::string> args = {"strata-train", "--train", "x", "--config", ConfigPath()};
  for (size_t start = first_break == std::string_view::npos ? all.size() + 1 : first_break + 1; start <= all.size();) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    args.emplace_back(all.substr(start, end - start));
    start = end + 1;
  }
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  strata::TrainOptions options;
  const strata::Status st = strata::ParseTrainOptions(static_cast<int>(argv.size()), argv.data(), &options);
  if (!st.ok() && st.message().empty()) __builtin_trap();
  return 0;
}
