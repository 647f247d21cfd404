// ExtentFile (extent_io.h): aligned heads through O_DIRECT, the rest through the page
// cache, each write repeated until whole.
#include "ckpt/extent_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata::ckpt {
namespace {

bool Aligned(uint64_t v) { return v % ExtentFile::kAlign == 0; }

}  // namespace

Status ExtentFile::Create(const std::string& path, std::vector<Extent> extents, std::unique_ptr<ExtentFile>* out) {
  std::unique_ptr<ExtentFile> f(new ExtentFile(path, std::move(extents)));
  f->fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (f->fd_ < 0) return Status::IOError(path + ": cannot open for writing: " + std::strerror(errno));
  f->direct_fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT);
  *out = std::move(f);
  return Status::OK();
}

ExtentFile::~ExtentFile() {
  if (fd_ >= 0) ::close(fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

Status ExtentFile::WriteWhole(int fd, const uint8_t* data, size_t bytes, uint64_t offset) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::IOError(path_ + ": write of " + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                             " failed: " + (n < 0 ? std::strerror(errno) : "no progress"));
    }
    data += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status ExtentFile::Append(size_t e, const void* data, size_t bytes) {
  if (done_[e] + bytes > extents_[e].bytes) {
    return Status::InvalidArgument(path_ + ": " + std::to_string(done_[e] + bytes) + " bytes for an extent of " +
                                   std::to_string(extents_[e].bytes));
  }
  const auto* p = static_cast<const uint8_t*>(data);
  const uint64_t at = extents_[e].offset + done_[e];
  const bool direct = direct_fd_ >= 0 && Aligned(at) && Aligned(reinterpret_cast<uintptr_t>(p));
  const size_t head = direct ? bytes / kAlign * kAlign : 0;
  if (head > 0) STRATA_RETURN_IF_ERROR(WriteWhole(direct_fd_, p, head, at));
  if (head < bytes) STRATA_RETURN_IF_ERROR(WriteWhole(fd_, p + head, bytes - head, at + head));
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
  if (::fsync(fd_) != 0) return Status::IOError(path_ + ": fsync: " + std::strerror(errno));
  return Status::OK();
}

}  // namespace strata::ckpt
