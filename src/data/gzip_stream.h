// GzipStream: the decompressed bytes of a gzip file, member after member (`cat a.gz b.gz`
// is one valid input), with the two defects gzread lets pass refused: a file that ends
// inside a member (truncated) and bytes after the last member that do not start another
// (trailing garbage). Errors name the file and the compressed byte offset. Not thread-safe;
// one per reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/common/status.h"

struct z_stream_s;  // zlib's z_stream, kept out of this header

namespace strata::data_internal {

class GzipStream {
 public:
  GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  ~GzipStream();

  // REQUIRES: the file starts with the gzip magic bytes (IsGzipFile).
  Status Open(const std::string& path);
  // Reads up to n decompressed bytes into buf; *got == 0 only at the end of the file.
  Status Read(char* buf, size_t n, size_t* got);
  void Close();

 private:
  Status FillInput();
  Status AfterMember();

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<z_stream_s> z_;
  bool inflating_ = false;     // z_ holds an inflate state
  std::vector<unsigned char> in_;
  uint64_t file_offset_ = 0;   // compressed bytes read from the file so far
  bool file_eof_ = false;
  bool in_member_ = false;     // inside a gzip member: its end has not been seen
  bool done_ = false;
};

}  // namespace strata::data_internal
