// ByteSource (pread / GzipStream) and the buffered LineReader on top of it.
#include "data/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace strata::data_internal {

Status ByteSource::Open(const std::string& path, FileEncoding encoding, uint64_t begin, uint64_t end) {
  assert(encoding != FileEncoding::kParquet);
  assert(encoding != FileEncoding::kGzip || begin == 0);
  Close();
  path_ = path;
  offset_ = begin;
  end_ = end;
  encoding_ = encoding;
  if (encoding == FileEncoding::kGzip) return gzip_.Open(path);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return ErrnoStatus("cannot open input file " + path, errno);
  ::posix_fadvise(fd_, static_cast<off_t>(begin), 0, POSIX_FADV_SEQUENTIAL);
  return Status::OK();
}

Status ByteSource::OpenParquet(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped) {
  Close();
  path_ = path;
  encoding_ = FileEncoding::kParquet;
  return parquet_.Open(path, delimiter, first_line, skipped);
}

Status ByteSource::Read(char* buf, size_t n, size_t* got) {
  *got = 0;
  if (encoding_ == FileEncoding::kGzip) return gzip_.Read(buf, n, got);
  if (encoding_ == FileEncoding::kParquet) return parquet_.Read(buf, n, got);
  if (fd_ < 0 || offset_ >= end_) return Status::OK();
  size_t want = static_cast<size_t>(std::min<uint64_t>(n, end_ - offset_));
  ssize_t r;
  do {
    r = ::pread(fd_, buf, want, static_cast<off_t>(offset_));
  } while (r < 0 && errno == EINTR);
  if (r < 0) return ErrnoStatus("cannot read input file " + path_, errno);
  offset_ += static_cast<uint64_t>(r);
  *got = static_cast<size_t>(r);
  return Status::OK();
}

void ByteSource::Close() {
  gzip_.Close();
  parquet_.Close();
  if (fd_ >= 0) ::close(fd_);
  encoding_ = FileEncoding::kPlain;
  fd_ = -1;
}

Status LineReader::Open(const std::string& path, FileEncoding encoding, uint64_t begin, uint64_t end) {
  pos_ = 0;
  size_ = 0;
  eof_ = false;
  at_file_start_ = begin == 0;
  return source_.Open(path, encoding, begin, end);
}

Status LineReader::OpenParquet(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped) {
  pos_ = 0;
  size_ = 0;
  eof_ = false;
  at_file_start_ = false;  // printed by ParquetStream, which writes no byte order mark
  return source_.OpenParquet(path, delimiter, first_line, skipped);
}

// Moves the unread tail to the front (growing the buffer when one line fills it) and reads.
Status LineReader::Refill() {
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, size_ - pos_);
    size_ -= pos_;
    pos_ = 0;
  }
  if (size_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  size_t got = 0;
  STRATA_RETURN_IF_ERROR(source_.Read(buffer_.data() + size_, buffer_.size() - size_, &got));
  if (got == 0) eof_ = true;
  size_ += got;
  return Status::OK();
}

Status LineReader::Next(std::string_view* line, bool* has_line) {
  size_t scanned = pos_;  // bytes before this offset hold no '\n'
  for (;;) {
    const char* base = buffer_.data();
    const void* nl = std::memchr(base + scanned, '\n', size_ - scanned);
    size_t stop;
    if (nl != nullptr) {
      stop = static_cast<size_t>(static_cast<const char*>(nl) - base);
    } else if (eof_) {
      if (pos_ == size_) {
        *has_line = false;
        return Status::OK();
      }
      stop = size_;
    } else {
      size_t consumed = pos_;
      scanned = size_;
      STRATA_RETURN_IF_ERROR(Refill());
      scanned -= consumed;
      continue;
    }
    size_t len = stop - pos_;
    if (len > 0 && base[stop - 1] == '\r') --len;
    *line = std::string_view(base + pos_, len);
    pos_ = std::min(stop + 1, size_);
    *has_line = true;
    if (at_file_start_) {
      at_file_start_ = false;
      constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
      if (line->starts_with(kUtf8Bom)) line->remove_prefix(kUtf8Bom.size());
    }
    return Status::OK();
  }
}

}  // namespace strata::data_internal
