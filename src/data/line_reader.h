// LineReader: buffered line-at-a-time reading of one input file, plain, gzip or Parquet,
// for the shard planner and the chunk reader. A plain file is read with pread from a byte
// range; a gzip file is decompressed from its start (GzipStream); a Parquet file is printed
// as delimited text from a row group on (ParquetStream). Lines come back as views into an
// internal buffer (no copy, no allocation per line). Not thread-safe; one per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "data/gzip_stream.h"
#include "data/parquet_stream.h"
#include "strata/common/status.h"
#include "strata/data/shard_plan.h"

namespace strata::data_internal {

inline constexpr uint64_t kToEnd = std::numeric_limits<uint64_t>::max();
inline constexpr size_t kReadBufferBytes = size_t{4} << 20;

// A stream of raw bytes: [begin, end) of a plain file, all of a gzip file's content, or a
// Parquet file's text from a row group on.
class ByteSource {
 public:
  ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  ~ByteSource() { Close(); }

  // REQUIRES: encoding is not Parquet; for gzip, begin == 0 (compressed streams cannot
  // seek cheaply).
  Status Open(const std::string& path, FileEncoding encoding, uint64_t begin, uint64_t end);
  // At line first_line of the file's text or before (ParquetStream::Open).
  Status OpenParquet(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped);
  // Reads up to n bytes into buf; *got == 0 means the end of the range or file.
  Status Read(char* buf, size_t n, size_t* got);
  void Close();

 private:
  std::string path_;
  int fd_ = -1;
  GzipStream gzip_;
  ParquetStream parquet_;
  FileEncoding encoding_ = FileEncoding::kPlain;
  uint64_t offset_ = 0;
  uint64_t end_ = 0;
};

class LineReader {
 public:
  explicit LineReader(size_t buffer_bytes = kReadBufferBytes) : buffer_(buffer_bytes) {}

  Status Open(const std::string& path, FileEncoding encoding, uint64_t begin = 0, uint64_t end = kToEnd);
  Status OpenParquet(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped);
  // Sets *line to the next line, without its '\n' and without a trailing '\r', valid until
  // the next call; the last line of a file needs no '\n'. *has_line = false at the end.
  // A file's first line comes without the UTF-8 byte order mark some editors and
  // spreadsheets write before it.
  Status Next(std::string_view* line, bool* has_line);

 private:
  Status Refill();

  ByteSource source_;
  std::vector<char> buffer_;
  size_t pos_ = 0;   // first unread byte in buffer_
  size_t size_ = 0;  // bytes of buffer_ holding data
  bool eof_ = false;
  bool at_file_start_ = false;  // the next line is the file's first
};

}  // namespace strata::data_internal
