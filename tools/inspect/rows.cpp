// strata-inspect get, top and export: individual rows of a checkpoint.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <queue>
#include <set>

#include "inspect.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"
#include "strata/common/row.h"

namespace strata::inspect {
namespace {

void PrintFloats(std::FILE* out, const char* label, const float* x, int n) {
  std::fprintf(out, "  %-10s", label);
  for (int i = 0; i < n; ++i) std::fprintf(out, " %.9g", x[i]);
  std::fprintf(out, "\n");
}

double RowNorm(const RowLayout& layout, const uint8_t* row) {
  std::vector<float> e(static_cast<size_t>(layout.dim));
  layout.LoadEmbedding(row, e.data());
  double s = 0;
  for (float x : e) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

// Every row of every rank file of the checkpoint, in file order.
Status ScanAll(const std::string& path, const ckpt::CheckpointMeta& meta, const ckpt::RowSink& sink) {
  for (int r = 0; r < meta.ranks; ++r) STRATA_RETURN_IF_ERROR(ckpt::ScanRankFile(path, meta, r, sink));
  return Status::OK();
}

}  // namespace

Status Get(const Args& args) {
  std::string path;
  ckpt::CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(OpenCheckpoint(args.positional[0], &path, &meta));
  std::set<uint64_t> wanted, files;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    uint64_t key = 0;
    STRATA_RETURN_IF_ERROR(ParseU64(args.positional[i], "KEY", &key));
    wanted.insert(key);
    files.insert(OwnerRank(key, meta.ranks));
  }
  const RowLayout layout = RowLayoutOf(meta.model);
  for (uint64_t f : files) {  // a key can only be in its owner's file
    STRATA_RETURN_IF_ERROR(ckpt::ScanRankFile(path, meta, static_cast<int>(f), [&](const uint64_t* k, size_t n, const uint8_t* rows) {
      for (size_t i = 0; i < n; ++i) {
        if (!wanted.count(k[i])) continue;
        const uint8_t* row = rows + i * layout.bytes();
        std::printf("key %llu (0x%016llx): slot %d, rank %llu, freq %u, last_pass %u\n",
                    static_cast<unsigned long long>(k[i]), static_cast<unsigned long long>(k[i]), SlotOfKey(k[i]),
                    static_cast<unsigned long long>(f), layout.Freq(row), layout.LastPass(row));
        std::vector<float> f(layout.floats());
        layout.LoadFloats(row, f.data());
        PrintFloats(stdout, "embedding", f.data(), layout.dim);
        PrintFloats(stdout, "state", f.data() + layout.dim, layout.state_floats);
        wanted.erase(k[i]);
      }
      return Status::OK();
    }));
  }
  if (wanted.empty()) return Status::OK();
  std::string missing;
  for (uint64_t k : wanted) {
    missing += ' ';
    missing += std::to_string(k);
  }
  return Status::NotFound(path + ": no row for key" + missing);
}

Status Top(const Args& args) {
  std::string path;
  ckpt::CheckpointMeta meta;
  uint64_t n = 0;
  const std::string by = args.options.count("by") ? args.options.at("by") : "freq";
  if (by != "freq" && by != "norm") return Status::InvalidArgument("--by: '" + by + "' (expected freq or norm)");
  STRATA_RETURN_IF_ERROR(ParseU64(args.positional[1], "N", &n));
  STRATA_RETURN_IF_ERROR(OpenCheckpoint(args.positional[0], &path, &meta));
  const RowLayout layout = RowLayoutOf(meta.model);
  // Min-heap of (score, key, row) holding the best n so far; ties broken by key.
  using Entry = std::pair<std::pair<double, uint64_t>, std::vector<uint8_t>>;
  auto greater = [](const Entry& a, const Entry& b) { return a.first > b.first; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(greater)> heap(greater);
  STRATA_RETURN_IF_ERROR(ScanAll(path, meta, [&](const uint64_t* k, size_t count, const uint8_t* rows) {
    for (size_t i = 0; i < count && n > 0; ++i) {
      const uint8_t* row = rows + i * layout.bytes();
      const double score = by == "freq" ? layout.Freq(row) : RowNorm(layout, row);
      if (heap.size() == n && std::make_pair(score, k[i]) <= heap.top().first) continue;
      heap.push({{score, k[i]}, std::vector<uint8_t>(row, row + layout.bytes())});
      if (heap.size() > n) heap.pop();
    }
    return Status::OK();
  }));
  std::vector<Entry> best;
  for (; !heap.empty(); heap.pop()) best.push_back(heap.top());
  std::printf("%-20s %-5s %-10s %-9s %s\n", "key", "slot", "freq", "last_pass", "norm");
  for (auto it = best.rbegin(); it != best.rend(); ++it) {
    const uint8_t* row = it->second.data();
    std::printf("%-20llu %-5d %-10u %-9u %.6g\n", static_cast<unsigned long long>(it->first.second),
                SlotOfKey(it->first.second), layout.Freq(row), layout.LastPass(row), RowNorm(layout, row));
  }
  return Status::OK();
}

Status Export(const Args& args) {
  const std::string format = args.options.count("format") ? args.options.at("format") : "tsv";
  if (format != "tsv") return Status::InvalidArgument("--format: '" + format + "' (supported: tsv)");
  std::string path;
  ckpt::CheckpointMeta meta;
  STRATA_RETURN_IF_ERROR(OpenCheckpoint(args.positional[0], &path, &meta));
  const std::string out_path = args.options.count("out") ? args.options.at("out") : "";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, std::fclose);
  if (!out_path.empty()) {
    file.reset(std::fopen(out_path.c_str(), "w"));
    if (!file) return ErrnoStatus("--out: cannot create " + out_path, errno);
  }
  std::FILE* out = file ? file.get() : stdout;
  const RowLayout layout = RowLayoutOf(meta.model);
  std::vector<float> f(layout.floats());
  // Same columns as strata-train --export-rows: key, freq, last_pass, embedding, state.
  STRATA_RETURN_IF_ERROR(ScanAll(path, meta, [&](const uint64_t* k, size_t n, const uint8_t* rows) {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* row = rows + i * layout.bytes();
      std::fprintf(out, "%llu\t%u\t%u", static_cast<unsigned long long>(k[i]), layout.Freq(row), layout.LastPass(row));
      layout.LoadFloats(row, f.data());
      for (float x : f) std::fprintf(out, "\t%.9g", x);
      std::fputc('\n', out);
    }
    return std::ferror(out) ? Status::IOError("cannot write " + (out_path.empty() ? "stdout" : out_path)) : Status::OK();
  }));
  if (file && std::fclose(file.release()) != 0) return ErrnoStatus("cannot write " + out_path, errno);
  return Status::OK();
}

}  // namespace strata::inspect
