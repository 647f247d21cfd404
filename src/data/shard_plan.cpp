// PlanShards: scans the input files (newline counts, plus where each stripe starts in a plain
// file) and deals the concatenated lines' stripes out to the workers as pieces.
#include "strata/data/shard_plan.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

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

// What one scan of a file learns. For a plain file, stripe_start[i] is the byte offset of
// its line first_stripe_line + i * stripe_lines: the file's lines after line 0 that start a
// stripe of the whole input.
struct FileScan {
  InputFile info;
  uint64_t first_stripe_line = 0;
  std::vector<uint64_t> stripe_start;

  // Where local line `line` starts. REQUIRES: line is 0, info.lines, or starts a stripe.
  uint64_t LineStart(uint64_t line, uint64_t stripe_lines) const {
    if (line == 0) return 0;
    if (line >= info.lines) return info.bytes;
    return stripe_start[(line - first_stripe_line) / stripe_lines];
  }
};

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

// Counts the newlines of p[0, n), the file's bytes from `offset`, after the `*newlines`
// before them; where the line that follows one is the next to start a stripe
// (*next_stripe_line), notes its offset.
void ScanNewlines(const char* p, size_t n, uint64_t offset, uint64_t stripe_lines, uint64_t* newlines,
                  uint64_t* next_stripe_line, std::vector<uint64_t>* stripe_start) {
  const char* begin = p;
  const char* end = p + n;
  while (const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p))) {
    p = static_cast<const char*>(nl) + 1;
    if (++*newlines == *next_stripe_line) {
      stripe_start->push_back(offset + static_cast<uint64_t>(p - begin));
      *next_stripe_line += stripe_lines;
    }
  }
}

// Scans a file whose line 0 is global line `global_first` of the input; stripe_lines 0: a
// file dealt out whole, whose stripe starts are not noted.
Status ScanFile(const std::string& path, uint64_t global_first, uint64_t stripe_lines, std::vector<char>* buf,
                FileScan* scan) {
  scan->info.path = path;
  STRATA_RETURN_IF_ERROR(DetectEncoding(path, &scan->info.encoding));
  if (scan->info.encoding == FileEncoding::kParquet) return ScanParquet(path, &scan->info);
  const bool noted = scan->info.encoding == FileEncoding::kPlain && stripe_lines > 0;
  if (noted) scan->first_stripe_line = stripe_lines - global_first % stripe_lines;  // > 0: line 0 needs no note
  uint64_t next_stripe_line = noted ? scan->first_stripe_line : std::numeric_limits<uint64_t>::max();
  ByteSource source;
  STRATA_RETURN_IF_ERROR(source.Open(path, scan->info.encoding, 0, kToEnd));
  uint64_t newlines = 0;
  uint64_t offset = 0;
  char last = '\n';
  for (;;) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(source.Read(buf->data(), buf->size(), &got));
    if (got == 0) break;
    ScanNewlines(buf->data(), got, offset, stripe_lines, &newlines, &next_stripe_line, &scan->stripe_start);
    offset += got;
    last = (*buf)[got - 1];
  }
  scan->info.lines = newlines + (last != '\n' ? 1 : 0);
  scan->info.bytes = offset;
  return Status::OK();
}

std::string JoinNames(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// A counting scan notes where every kMarkEvery-th line of a plain file starts, so that
// the stripe starts, known only once every file is counted, are found by reading on from
// the mark before each, not by scanning the file again: W reads of at most kMarkEvery lines.
constexpr uint64_t kMarkEvery = 4096;

// For kContiguousChunks: scans every file for its lines (N in all) and sets *stripe_lines
// to ceil(N / W). A plain file's scan notes marks (its stripe_start for stripes of
// kMarkEvery lines).
Status CountLines(const std::vector<std::string>& files, int num_workers, std::vector<char>* buf,
                  std::vector<FileScan>* scans, uint64_t* stripe_lines) {
  scans->resize(files.size());
  uint64_t total = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    STRATA_RETURN_IF_ERROR(ScanFile(files[i], 0, kMarkEvery, buf, &(*scans)[i]));
    total += (*scans)[i].info.lines;
  }
  const auto workers = static_cast<uint64_t>(num_workers);
  *stripe_lines = std::max<uint64_t>(1, (total + workers - 1) / workers);
  return Status::OK();
}

// Where line `line` (< its lines) of a plain file that a counting scan marked starts.
Status SeekLine(const FileScan& counted, uint64_t line, std::vector<char>* buf, uint64_t* start) {
  const uint64_t mark = line / kMarkEvery;
  *start = counted.LineStart(mark * kMarkEvery, kMarkEvery);
  uint64_t to_pass = line - mark * kMarkEvery;  // newlines between the mark and the line
  ByteSource source;
  STRATA_RETURN_IF_ERROR(source.Open(counted.info.path, FileEncoding::kPlain, *start, kToEnd));
  while (to_pass > 0) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(source.Read(buf->data(), buf->size(), &got));
    if (got == 0) return Status::Corruption(counted.info.path + ": changed while its lines were counted");
    const char* p = buf->data();
    const char* end = p + got;
    while (to_pass > 0) {
      const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
      if (nl == nullptr) break;
      p = static_cast<const char*>(nl) + 1;
      --to_pass;
    }
    *start += static_cast<uint64_t>(to_pass == 0 ? p - buf->data() : got);
  }
  return Status::OK();
}

// A counted plain file (line 0 global line `global_first`) with its stripe starts found
// from its marks (SeekLine), as ScanFile would have noted them.
Status MarkStripeStarts(const FileScan& counted, uint64_t global_first, uint64_t stripe_lines,
                        std::vector<char>* buf, FileScan* scan) {
  scan->info = counted.info;
  scan->first_stripe_line = stripe_lines - global_first % stripe_lines;
  for (uint64_t line = scan->first_stripe_line; line < counted.info.lines; line += stripe_lines) {
    uint64_t start = 0;
    STRATA_RETURN_IF_ERROR(SeekLine(counted, line, buf, &start));
    scan->stripe_start.push_back(start);
  }
  return Status::OK();
}

// The pieces of one scanned file, whose line 0 is global line `global_first`: its part of
// each stripe, to the stripe's worker; a worker's piece that goes on where its last one in
// the same file ended is joined to it.
void CutFile(const FileScan& scan, uint32_t file, uint64_t global_first, uint64_t stripe_lines,
             std::vector<std::vector<ShardPiece>>* chunks) {
  const uint64_t workers = chunks->size();
  const bool plain = scan.info.encoding == FileEncoding::kPlain;
  for (uint64_t line = 0; line < scan.info.lines;) {
    const uint64_t stripe = (global_first + line) / stripe_lines;
    const uint64_t end = std::min(scan.info.lines, (stripe + 1) * stripe_lines - global_first);
    std::vector<ShardPiece>& chunk = (*chunks)[stripe % workers];
    if (!chunk.empty() && chunk.back().file == file && chunk.back().first_line + chunk.back().num_lines == line) {
      chunk.back().num_lines += end - line;
      if (plain) chunk.back().end_byte = scan.LineStart(end, stripe_lines);
    } else {
      ShardPiece piece;
      piece.file = file;
      piece.first_line = line;
      piece.num_lines = end - line;
      if (plain) {
        piece.begin_byte = scan.LineStart(line, stripe_lines);
        piece.end_byte = scan.LineStart(end, stripe_lines);
      }
      chunk.push_back(piece);
    }
    line = end;
  }
}

// A file dealt out whole: to worker `file` mod W (no piece for a file of no lines).
void DealFile(const FileScan& scan, uint32_t file, std::vector<std::vector<ShardPiece>>* chunks) {
  if (scan.info.lines == 0) return;
  ShardPiece piece;
  piece.file = file;
  piece.num_lines = scan.info.lines;
  if (scan.info.encoding == FileEncoding::kPlain) piece.end_byte = scan.info.bytes;
  (*chunks)[file % chunks->size()].push_back(piece);
}

Status CheckPlanArgs(const std::vector<std::string>& files, int num_workers) {
  if (files.empty()) return Status::InvalidArgument("no input files");
  if (num_workers < 1) {
    return Status::InvalidArgument("number of workers must be >= 1, got " + std::to_string(num_workers));
  }
  return Status::OK();
}

// Scans the files (those a counting scan saw in `counted`, when it ran) and cuts them into
// `chunks`: stripes of stripe_lines, or the files whole when it is 0. Sets the files and
// their total lines.
Status CutFiles(const std::vector<std::string>& files, uint64_t stripe_lines, std::vector<FileScan>* counted,
                std::vector<char>* buf, std::vector<std::vector<ShardPiece>>* chunks, std::vector<InputFile>* infos,
                uint64_t* total) {
  for (size_t i = 0; i < files.size(); ++i) {
    FileScan scan;
    if (counted->empty()) {
      STRATA_RETURN_IF_ERROR(ScanFile(files[i], *total, stripe_lines, buf, &scan));
    } else if ((*counted)[i].info.encoding == FileEncoding::kPlain) {
      STRATA_RETURN_IF_ERROR(MarkStripeStarts((*counted)[i], *total, stripe_lines, buf, &scan));
    } else {
      scan = std::move((*counted)[i]);  // whole already: only a plain file notes stripe starts
    }
    if (stripe_lines == 0) {
      DealFile(scan, static_cast<uint32_t>(i), chunks);
    } else {
      CutFile(scan, static_cast<uint32_t>(i), *total, stripe_lines, chunks);
    }
    *total += scan.info.lines;
    infos->push_back(scan.info);
  }
  if (*total == 0) return Status::InvalidArgument("no examples in " + JoinNames(files));
  return Status::OK();
}

}  // namespace

std::string DescribeInput(const ShardPlan& plan) {
  uint64_t id = Mix64(plan.files().size());
  for (const InputFile& f : plan.files()) {
    for (char c : std::filesystem::path(f.path).filename().string()) id = Mix64(id ^ static_cast<uint8_t>(c));
    id = Mix64(Mix64(id ^ f.lines) ^ f.bytes);
  }
  std::string stripes;
  if (plan.num_workers() > 1) {
    stripes = plan.whole_files() ? std::string(" in whole files dealt out in turn")
                                 : fmt::format(" in stripes of {}", plan.stripe_lines());
  }
  return fmt::format("{} file{}, {} lines{}, id {:016x}", plan.files().size(), plan.files().size() == 1 ? "" : "s",
                     plan.total_lines(), stripes, id);
}

Status NoExamplesIn(const ShardPlan& plan) {
  std::vector<std::string> names;
  for (const InputFile& f : plan.files()) names.push_back(f.path);
  return Status::InvalidArgument(fmt::format("no examples in {}: {} line{} read, each blank or a malformed row skipped "
                                             "under --max-bad-rows (see the warnings)",
                                             JoinNames(names), plan.total_lines(), plan.total_lines() == 1 ? "" : "s"));
}

Status PlanShards(const std::vector<std::string>& files, int num_workers, uint64_t stripe_lines, ShardPlan* out) {
  STRATA_RETURN_IF_ERROR(CheckPlanArgs(files, num_workers));
  std::vector<char> buf(kReadBufferBytes);
  std::vector<FileScan> counted;  // kContiguousChunks: the scans that counted the lines
  if (stripe_lines == kContiguousChunks) {
    STRATA_RETURN_IF_ERROR(CountLines(files, num_workers, &buf, &counted, &stripe_lines));
  }
  ShardPlan plan;
  plan.stripe_lines_ = stripe_lines;
  plan.chunks_.resize(static_cast<size_t>(num_workers));
  STRATA_RETURN_IF_ERROR(
      CutFiles(files, stripe_lines, &counted, &buf, &plan.chunks_, &plan.files_, &plan.total_lines_));
  *out = std::move(plan);
  return Status::OK();
}

Status PlanWholeFiles(const std::vector<std::string>& files, int num_workers, ShardPlan* out) {
  STRATA_RETURN_IF_ERROR(CheckPlanArgs(files, num_workers));
  std::vector<char> buf(kReadBufferBytes);
  std::vector<FileScan> counted;  // none: one scan a file
  ShardPlan plan;
  plan.stripe_lines_ = 0;
  plan.chunks_.resize(static_cast<size_t>(num_workers));
  STRATA_RETURN_IF_ERROR(CutFiles(files, 0, &counted, &buf, &plan.chunks_, &plan.files_, &plan.total_lines_));
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace strata
