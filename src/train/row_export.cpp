// ExportRowsTsv: --export-rows.
#include "train/row_export.h"

#include <fmt/format.h>

#include <vector>

#include <cerrno>
#include <cstdio>
#include <filesystem>

namespace strata {

Status ExportRowsTsv(RowStore& store, const RowLayout& layout, const std::string& dir, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("--export-rows: cannot create " + dir + ": " + ec.message());
  const std::string path = fmt::format("{}/rows-{}.tsv", dir, rank);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return ErrnoStatus("--export-rows: cannot open " + path, errno);
  std::string line;
  std::vector<float> e(layout.floats());
  Status st = store.Scan([&](uint64_t key, const uint8_t* row) {
    line = fmt::format("{}\t{}\t{}", key, layout.Freq(row), layout.LastPass(row));
    layout.LoadFloats(row, e.data());
    for (float x : e) line += fmt::format("\t{:.9g}", x);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), f);
  });
  const bool write_failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || write_failed) return ErrnoStatus("--export-rows: cannot write " + path, errno);
  return st;
}

}  // namespace strata
