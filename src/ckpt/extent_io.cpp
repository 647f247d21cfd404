// ExtentFile and ExtentReader (extent_io.h): aligned heads through O_DIRECT, the rest
// through the page cache, each transfer repeated until whole.
#include "ckpt/extent_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata::ckpt {
namespace {

bool Aligned(uint64_t v) { return v % ExtentFile::kAlign == 0; }

// Calls transfer(fd, done, n) for the range [0, bytes) of a transfer at file offset `at`
// from or to memory p: the 4 KiB-aligned head through direct_fd when the offset and the
// memory are aligned, the rest through fd.
template <typename Transfer>
Status SplitAligned(int fd, int direct_fd, uint64_t at, const void* p, size_t bytes, const Transfer& transfer) {
  const bool direct = direct_fd >= 0 && Aligned(at) && Aligned(reinterpret_cast<uintptr_t>(p));
  const size_t head = direct ? bytes / ExtentFile::kAlign * ExtentFile::kAlign : 0;
  if (head > 0) STRATA_RETURN_IF_ERROR(transfer(direct_fd, 0, head));
  if (head < bytes) STRATA_RETURN_IF_ERROR(transfer(fd, head, bytes - head));
  return Status::OK();
}

// Repeats io (pread or pwrite) until `bytes` at `offset` are done; `verb` and what a
// transfer of nothing means name the failure.
template <typename Byte, typename Io>
Status Whole(const std::string& path, const char* verb, const char* at_zero, Io io, int fd, Byte* data, size_t bytes,
             uint64_t offset) {
  while (bytes > 0) {
    const ssize_t n = io(fd, data, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::IOError(path + ": " + verb + " of " + std::to_string(bytes) + " bytes at " +
                             std::to_string(offset) + " failed: " + (n < 0 ? std::strerror(errno) : at_zero));
    }
    data += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

}  // namespace

namespace extent_internal {

Descriptors::~Descriptors() {
  if (fd >= 0) ::close(fd);
  if (direct_fd >= 0) ::close(direct_fd);
}

Status Descriptors::Open(const std::string& path, int flags, const char* purpose) {
  fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path + ": cannot open for " + purpose + ": " + std::strerror(errno));
  direct_fd = ::open(path.c_str(), flags | O_CLOEXEC | O_DIRECT);
  return Status::OK();
}

}  // namespace extent_internal

Status ExtentFile::Create(const std::string& path, std::vector<Extent> extents, std::unique_ptr<ExtentFile>* out) {
  std::unique_ptr<ExtentFile> f(new ExtentFile(path, std::move(extents)));
  STRATA_RETURN_IF_ERROR(f->fds_.Open(path, O_WRONLY, "writing"));
  *out = std::move(f);
  return Status::OK();
}

Status ExtentFile::WriteWhole(int fd, const uint8_t* data, size_t bytes, uint64_t offset) {
  return Whole(path_, "write", "no progress", ::pwrite, fd, data, bytes, offset);
}

Status ExtentFile::Append(size_t e, const void* data, size_t bytes) {
  if (done_[e] + bytes > extents_[e].bytes) {
    return Status::InvalidArgument(path_ + ": " + std::to_string(done_[e] + bytes) + " bytes for an extent of " +
                                   std::to_string(extents_[e].bytes));
  }
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t at = extents_[e].offset + done_[e];
  STRATA_RETURN_IF_ERROR(SplitAligned(fds_.fd, fds_.direct_fd, at, p, bytes, [&](int fd, size_t done, size_t n) {
    return WriteWhole(fd, p + done, n, at + done);
  }));
  done_[e] += bytes;
  return Status::OK();
}

Status ExtentFile::Finish() {
  for (size_t e = 0; e < extents_.size(); ++e) {
    if (done_[e] != extents_[e].bytes) {
      return Status::IOError(path_ + ": extent " + std::to_string(e) + " got " + std::to_string(done_[e]) +
                             " of its " + std::to_string(extents_[e].bytes) + " bytes");
    }
  }
  if (::fsync(fds_.fd) != 0) return Status::IOError(path_ + ": fsync: " + std::strerror(errno));
  return Status::OK();
}

Status ExtentReader::Open(const std::string& path, std::unique_ptr<ExtentReader>* out) {
  std::unique_ptr<ExtentReader> r(new ExtentReader(path));
  STRATA_RETURN_IF_ERROR(r->fds_.Open(path, O_RDONLY, "reading"));
  *out = std::move(r);
  return Status::OK();
}

Status ExtentReader::Read(uint64_t offset, size_t bytes, void* data) const {
  auto* p = static_cast<uint8_t*>(data);
  return SplitAligned(fds_.fd, fds_.direct_fd, offset, p, bytes, [&](int fd, size_t done, size_t n) {
    return Whole(path_, "read", "the file ends first (truncated?)", ::pread, fd, p + done, n, offset + done);
  });
}

void ExtentReader::WillNeed(uint64_t offset, size_t bytes) const {
  if (fds_.direct_fd >= 0) return;  // O_DIRECT reads go around the page cache
  ::posix_fadvise(fds_.fd, static_cast<off_t>(offset), static_cast<off_t>(bytes), POSIX_FADV_WILLNEED);
}

}  // namespace strata::ckpt
