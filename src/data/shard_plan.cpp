// PlanShards: scans the input files (newline counts, plus line-start checkpoints for plain
// files) and cuts the concatenated lines into per-worker pieces.
#include "strata/data/shard_plan.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "data/line_reader.h"
#include "data/parquet_stream.h"
#include "strata/common/hash.h"
#include "strata/data/input_files.h"

namespace strata {
namespace {

using data_internal::ByteSource;
using data_internal::kReadBufferBytes;
using data_internal::kToEnd;

// What one scan of a file learns. For a plain file, segments[i] starts at byte
// seg_offset[i] and seg_newlines[i] newlines precede it; a final entry holds the totals.
struct FileScan {
  InputFile info;
  std::vector<uint64_t> seg_offset;
  std::vector<uint64_t> seg_newlines;
};

uint64_t CountNewlines(const char* p, size_t n) {
  uint64_t count = 0;
  const char* end = p + n;
  while (const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p))) {
    ++count;
    p = static_cast<const char*>(nl) + 1;
  }
  return count;
}

// A Parquet file's lines, read from its footer: its header line and one a row.
Status ScanParquet(const std::string& path, InputFile* info) {
  uint64_t rows = 0;
  STRATA_RETURN_IF_ERROR(data_internal::ParquetRowCount(path, &rows));
  std::error_code ec;
  info->bytes = std::filesystem::file_size(path, ec);
  if (ec) return Status::IOError("cannot read input file " + path + ": " + ec.message());
  info->lines = 1 + rows;
  return Status::OK();
}

Status ScanFile(const std::string& path, std::vector<char>* buf, FileScan* scan) {
  scan->info.path = path;
  STRATA_RETURN_IF_ERROR(DetectEncoding(path, &scan->info.encoding));
  if (scan->info.encoding == FileEncoding::kParquet) return ScanParquet(path, &scan->info);
  ByteSource source;
  STRATA_RETURN_IF_ERROR(source.Open(path, scan->info.encoding, 0, kToEnd));
  uint64_t newlines = 0;
  uint64_t offset = 0;
  char last = '\n';
  for (;;) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(source.Read(buf->data(), buf->size(), &got));
    if (got == 0) break;
    if (scan->info.encoding == FileEncoding::kPlain) {
      scan->seg_offset.push_back(offset);
      scan->seg_newlines.push_back(newlines);
    }
    newlines += CountNewlines(buf->data(), got);
    offset += got;
    last = (*buf)[got - 1];
  }
  scan->seg_offset.push_back(offset);
  scan->seg_newlines.push_back(newlines);
  scan->info.lines = newlines + (last != '\n' ? 1 : 0);
  scan->info.bytes = offset;
  return Status::OK();
}

// Byte offset where 0-based line `line` of a scanned plain file starts; file size for
// line == lines. Reads the one segment holding the line's preceding newline.
Status LineStart(const FileScan& scan, uint64_t line, std::vector<char>* buf, uint64_t* offset) {
  if (line == 0) {
    *offset = 0;
    return Status::OK();
  }
  if (line >= scan.info.lines) {
    *offset = scan.info.bytes;
    return Status::OK();
  }
  // The line starts after newline number `line` (1-based); find the segment holding it.
  auto it = std::lower_bound(scan.seg_newlines.begin(), scan.seg_newlines.end(), line);
  assert(it != scan.seg_newlines.begin());
  size_t seg = static_cast<size_t>(it - scan.seg_newlines.begin()) - 1;
  uint64_t begin = scan.seg_offset[seg];
  uint64_t end = scan.seg_offset[seg + 1];
  ByteSource source;
  STRATA_RETURN_IF_ERROR(source.Open(scan.info.path, FileEncoding::kPlain, begin, end));
  uint64_t need = line - scan.seg_newlines[seg];
  uint64_t pos = begin;
  for (;;) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(source.Read(buf->data(), buf->size(), &got));
    if (got == 0) break;
    const char* p = buf->data();
    const char* stop = p + got;
    while (const void* nl = std::memchr(p, '\n', static_cast<size_t>(stop - p))) {
      p = static_cast<const char*>(nl) + 1;
      if (--need == 0) {
        *offset = pos + static_cast<uint64_t>(p - buf->data());
        return Status::OK();
      }
    }
    pos += got;
  }
  return Status::IOError("input file " + scan.info.path + " changed while it was being planned");
}

std::string JoinNames(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

}  // namespace

std::string DescribeInput(const ShardPlan& plan) {
  uint64_t id = Mix64(plan.files().size());
  for (const InputFile& f : plan.files()) {
    for (char c : std::filesystem::path(f.path).filename().string()) id = Mix64(id ^ static_cast<uint8_t>(c));
    id = Mix64(Mix64(id ^ f.lines) ^ f.bytes);
  }
  return fmt::format("{} file{}, {} lines, id {:016x}", plan.files().size(), plan.files().size() == 1 ? "" : "s",
                     plan.total_lines(), id);
}

Status NoExamplesIn(const ShardPlan& plan) {
  std::vector<std::string> names;
  for (const InputFile& f : plan.files()) names.push_back(f.path);
  return Status::InvalidArgument(fmt::format("no examples in {}: {} line{} read, each blank or a malformed row skipped "
                                             "under --max-bad-rows (see the warnings)",
                                             JoinNames(names), plan.total_lines(), plan.total_lines() == 1 ? "" : "s"));
}

uint64_t ChunkBegin(uint64_t total_lines, int num_workers, int worker) {
  assert(num_workers >= 1 && worker >= 0 && worker <= num_workers);
  unsigned __int128 product = static_cast<unsigned __int128>(total_lines) * static_cast<unsigned>(worker);
  return static_cast<uint64_t>(product / static_cast<unsigned>(num_workers));
}

Status PlanShards(const std::vector<std::string>& files, int num_workers, ShardPlan* out) {
  if (files.empty()) return Status::InvalidArgument("no input files");
  if (num_workers < 1) {
    return Status::InvalidArgument("number of workers must be >= 1, got " + std::to_string(num_workers));
  }
  std::vector<char> buf(kReadBufferBytes);
  std::vector<FileScan> scans(files.size());
  uint64_t total = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    STRATA_RETURN_IF_ERROR(ScanFile(files[i], &buf, &scans[i]));
    total += scans[i].info.lines;
  }
  if (total == 0) return Status::InvalidArgument("no examples in " + JoinNames(files));

  ShardPlan plan;
  plan.total_lines_ = total;
  for (const FileScan& s : scans) plan.files_.push_back(s.info);
  plan.chunks_.resize(static_cast<size_t>(num_workers));
  // Walk the files once; each worker's global range [lo, hi) intersects a run of files.
  uint64_t file_start = 0;  // global index of the current file's line 0
  size_t f = 0;
  for (int w = 0; w < num_workers; ++w) {
    uint64_t lo = ChunkBegin(total, num_workers, w);
    uint64_t hi = ChunkBegin(total, num_workers, w + 1);
    while (lo < hi) {
      while (file_start + scans[f].info.lines <= lo) file_start += scans[f++].info.lines;
      const FileScan& s = scans[f];
      ShardPiece piece;
      piece.file = static_cast<uint32_t>(f);
      piece.first_line = lo - file_start;
      piece.num_lines = std::min(hi, file_start + s.info.lines) - lo;
      if (s.info.encoding == FileEncoding::kPlain) {
        STRATA_RETURN_IF_ERROR(LineStart(s, piece.first_line, &buf, &piece.begin_byte));
        STRATA_RETURN_IF_ERROR(LineStart(s, piece.first_line + piece.num_lines, &buf, &piece.end_byte));
      }
      plan.chunks_[static_cast<size_t>(w)].push_back(piece);
      lo += piece.num_lines;
    }
  }
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace strata
