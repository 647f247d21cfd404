// ChunkReader: walks a worker's pieces line by line and parses each row into the batch.
#include "strata/data/chunk_reader.h"

#include <cassert>

#include "data/criteo_row.h"
#include "data/line_reader.h"
#include "data/schema_row.h"

namespace strata {

ChunkReader::ChunkReader(const ShardPlan& plan, int worker, const TsvSchema& schema)
    : plan_(plan),
      pieces_(plan.chunk(worker)),
      tsv_(schema),
      lines_(std::make_unique<data_internal::LineReader>()) {
  assert(schema.num_slots >= 1 && schema.num_slots < 256 && schema.num_dense >= 0);
}

ChunkReader::ChunkReader(const ShardPlan& plan, int worker, const InputSchema& schema)
    : ChunkReader(plan, worker, TsvSchema{schema.num_slots(), schema.num_dense}) {
  if (!schema.criteo) schema_ = std::make_unique<const InputSchema>(schema);
}

std::string ChunkReader::FileOfPiece() const { return plan_.files()[pieces_[piece_].file].path; }

bool ChunkReader::ParseRow(std::string_view line, Batch* out, std::string* reason) const {
  return schema_ ? data_internal::ParseSchemaRow(line, *schema_, out, reason)
                 : data_internal::ParseCriteoRow(line, tsv_, out, reason);
}

ChunkReader::~ChunkReader() = default;

// Opens the current piece's file at its first line (gzip: decompresses and skips to it;
// Parquet: starts at its row group and skips to it). A gzip or Parquet stream still open on
// an earlier line of the same file goes on to it instead: its start is the costly part.
Status ChunkReader::OpenPiece() {
  const ShardPiece& piece = pieces_[piece_];
  const InputFile& file = plan_.files()[piece.file];
  uint64_t skipped = piece.first_line;
  if (file.encoding != FileEncoding::kPlain && stream_file_ == piece.file && stream_line_ <= piece.first_line) {
    skipped = stream_line_;
  } else {
    switch (file.encoding) {
      case FileEncoding::kPlain:
        STRATA_RETURN_IF_ERROR(lines_->Open(file.path, file.encoding, piece.begin_byte, piece.end_byte));
        break;
      case FileEncoding::kGzip:
        STRATA_RETURN_IF_ERROR(lines_->Open(file.path, file.encoding));
        skipped = 0;
        break;
      case FileEncoding::kParquet:
        STRATA_RETURN_IF_ERROR(lines_->OpenParquet(file.path, delimiter(), piece.first_line, &skipped));
        break;
    }
  }
  std::string_view line;
  bool has_line = false;
  for (uint64_t i = skipped; i < piece.first_line; ++i) {
    STRATA_RETURN_IF_ERROR(lines_->Next(&line, &has_line));
    if (!has_line) return Status::IOError("input file " + file.path + " has fewer lines than when it was planned");
  }
  stream_file_ = piece.file;
  piece_open_ = true;
  piece_done_ = 0;
  return Status::OK();
}

// The next line of the chunk, opening and closing pieces as needed; *line_no is its
// 1-based line number within its file. *has_line is false at the end of the chunk.
Status ChunkReader::NextLine(std::string_view* line, bool* has_line, uint64_t* line_no) {
  *has_line = false;
  while (piece_ < pieces_.size()) {
    if (!piece_open_) STRATA_RETURN_IF_ERROR(OpenPiece());
    const ShardPiece& piece = pieces_[piece_];
    if (piece_done_ == piece.num_lines) {
      stream_line_ = piece.first_line + piece.num_lines;
      piece_open_ = false;
      ++piece_;
      continue;
    }
    STRATA_RETURN_IF_ERROR(lines_->Next(line, has_line));
    if (!*has_line) {
      return Status::IOError("input file " + plan_.files()[piece.file].path +
                             " has fewer lines than when it was planned");
    }
    ++piece_done_;
    ++lines_read_;
    bytes_read_ += line->size() + 1;
    *line_no = piece.first_line + piece_done_;
    return Status::OK();
  }
  return Status::OK();
}

Status ChunkReader::Next(int max_examples, Batch* out) {
  assert(max_examples >= 1);
  out->Clear(tsv_.num_slots, tsv_.num_dense);
  std::string reason;
  while (out->num_examples < max_examples) {
    std::string_view line;
    bool has_line = false;
    uint64_t line_no = 0;
    STRATA_RETURN_IF_ERROR(NextLine(&line, &has_line, &line_no));
    if (!has_line) break;
    if (line.empty()) continue;
    if (schema_ && schema_->header && line_no == 1) {
      const Status st = data_internal::CheckHeader(line, *schema_);
      if (!st.ok()) return Status::InvalidArgument(FileOfPiece() + ":1: " + st.message());
      continue;
    }
    if (!ParseRow(line, out, &reason)) NoteBadRow(FileOfPiece(), line_no, reason);
  }
  return Status::OK();
}

void ChunkReader::NoteBadRow(const std::string& file, uint64_t line_no, const std::string& reason) {
  ++bad_rows_;
  if (bad_row_messages_.size() < kMaxBadRowMessages) {
    bad_row_messages_.push_back(file + ":" + std::to_string(line_no) + ": " + reason);
  }
}

Status ChunkReader::SkipLines(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view line;
    bool has_line = false;
    uint64_t line_no = 0;
    STRATA_RETURN_IF_ERROR(NextLine(&line, &has_line, &line_no));
    if (!has_line) return Status::InvalidArgument("cannot skip " + std::to_string(n) + " lines: the chunk has " + std::to_string(lines_read_));
  }
  return Status::OK();
}

Status CheckHeaders(const ShardPlan& plan, const InputSchema& schema) {
  for (const InputFile& file : plan.files()) {
    const bool parquet = file.encoding == FileEncoding::kParquet;
    if (parquet && !schema.header) {
      return Status::InvalidArgument(file.path + " is a Parquet file: read it with a --schema whose columns are named (header)");
    }
    if (!schema.header) continue;
    data_internal::LineReader lines(size_t{1} << 16);  // a header's worth; it grows for a longer line
    uint64_t skipped = 0;
    STRATA_RETURN_IF_ERROR(parquet ? lines.OpenParquet(file.path, schema.delimiter, 0, &skipped)
                                   : lines.Open(file.path, file.encoding));
    std::string_view line;
    bool has_line = false;
    STRATA_RETURN_IF_ERROR(lines.Next(&line, &has_line));
    const Status st = data_internal::CheckHeader(has_line ? line : std::string_view(), schema);
    if (!st.ok()) return Status::InvalidArgument(file.path + ":1: " + st.message());
  }
  return Status::OK();
}

}  // namespace strata
