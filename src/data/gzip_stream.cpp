// GzipStream: zlib's inflate over a file descriptor, one gzip member after another.
#include "data/gzip_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>

namespace strata::data_internal {
namespace {

constexpr size_t kInputBytes = size_t{1} << 18;
constexpr int kGzipWindowBits = 16 + MAX_WBITS;  // gzip wrapper, largest window

}  // namespace

GzipStream::GzipStream() : z_(std::make_unique<z_stream_s>()), in_(kInputBytes) {}

GzipStream::~GzipStream() { Close(); }

Status GzipStream::Open(const std::string& path) {
  Close();
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return ErrnoStatus("cannot open input file " + path, errno);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  *z_ = z_stream_s{};
  if (::inflateInit2(z_.get(), kGzipWindowBits) != Z_OK) return Status::ResourceExhausted("zlib: inflateInit2 failed");
  inflating_ = true;
  in_member_ = true;
  return Status::OK();
}

void GzipStream::Close() {
  if (inflating_) ::inflateEnd(z_.get());
  if (fd_ >= 0) ::close(fd_);
  inflating_ = false;
  fd_ = -1;
  file_offset_ = 0;
  file_eof_ = false;
  in_member_ = false;
  done_ = false;
}

// Moves the unread input to the front and reads more behind it.
Status GzipStream::FillInput() {
  const size_t kept = z_->avail_in;
  if (kept > 0 && z_->next_in != in_.data()) std::copy(z_->next_in, z_->next_in + kept, in_.data());
  ssize_t r;
  do {
    r = ::read(fd_, in_.data() + kept, in_.size() - kept);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return ErrnoStatus("cannot read input file " + path_, errno);
  if (r == 0) file_eof_ = true;
  file_offset_ += static_cast<uint64_t>(r);
  z_->next_in = in_.data();
  z_->avail_in = static_cast<uInt>(kept + static_cast<size_t>(r));
  return Status::OK();
}

// At a member's end: the file ends, or another member starts; anything else is garbage.
Status GzipStream::AfterMember() {
  in_member_ = false;
  while (z_->avail_in < 2 && !file_eof_) STRATA_RETURN_IF_ERROR(FillInput());
  if (z_->avail_in == 0) {
    done_ = true;
    return Status::OK();
  }
  const uint64_t at = file_offset_ - z_->avail_in;
  if (z_->avail_in < 2 || z_->next_in[0] != 0x1f || z_->next_in[1] != 0x8b) {
    return Status::Corruption("input file " + path_ + ": data after the end of the gzip stream, at byte " +
                              std::to_string(at) + " (a damaged or partly overwritten file)");
  }
  if (::inflateReset(z_.get()) != Z_OK) return Status::Corruption("input file " + path_ + ": zlib cannot reset");
  in_member_ = true;
  return Status::OK();
}

Status GzipStream::Read(char* buf, size_t n, size_t* got) {
  *got = 0;
  while (*got == 0 && n > 0 && !done_) {
    if (z_->avail_in == 0) {
      STRATA_RETURN_IF_ERROR(FillInput());
      if (z_->avail_in == 0) {
        return Status::Corruption("input file " + path_ + ": truncated gzip data (the file ends at byte " +
                                  std::to_string(file_offset_) + ", inside a compressed member)");
      }
    }
    z_->next_out = reinterpret_cast<Bytef*>(buf);
    z_->avail_out = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    const uInt out_before = z_->avail_out;
    const int r = ::inflate(z_.get(), Z_NO_FLUSH);
    *got = out_before - z_->avail_out;
    if (r == Z_STREAM_END) {
      STRATA_RETURN_IF_ERROR(AfterMember());
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
      const uint64_t at = file_offset_ - z_->avail_in;
      return Status::Corruption("input file " + path_ + ": bad gzip data near byte " + std::to_string(at) + ": " +
                                (z_->msg != nullptr ? z_->msg : zError(r)));
    }
  }
  return Status::OK();
}

}  // namespace strata::data_internal
