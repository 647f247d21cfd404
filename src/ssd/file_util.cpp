// File helpers for SSD-PS (see file_util.h).
#include "ssd/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "strata/common/huge_pages.h"

namespace strata::ssd {

void FreeDeleter::operator()(void* p) const { std::free(p); }

AlignedBuffer NewAlignedBuffer(size_t bytes) {
  const size_t n = (bytes + 4095) / 4096 * 4096;
  const bool huge = n >= kHugePageMin;
  void* p = nullptr;
  [[maybe_unused]] const int err = ::posix_memalign(&p, huge ? kHugePageMin : 4096, n == 0 ? 4096 : n);
  assert(err == 0);
  if (huge) AdviseHugePages(p, n);
  std::memset(p, 0, n == 0 ? 4096 : n);
  return AlignedBuffer(static_cast<uint8_t*>(p));
}

Status PwriteAll(int fd, const void* data, size_t n, uint64_t offset, const std::string& path) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write " + path, errno);
    }
    if (w == 0) return ErrnoStatus("write " + path, ENOSPC);
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::OK();
}

Status PreadAll(int fd, void* data, size_t n, uint64_t offset, const std::string& path, size_t* got) {
  auto* p = static_cast<uint8_t*>(data);
  *got = 0;
  while (*got < n) {
    const ssize_t r = ::pread(fd, p + *got, n - *got, static_cast<off_t>(offset + *got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read " + path, errno);
    }
    if (r == 0) break;
    *got += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status SyncFile(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) return ErrnoStatus("fdatasync " + path, errno);
  return Status::OK();
}

Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory " + dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync directory " + dir, err);
  return Status::OK();
}

Status ReadWholeFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  out->clear();
  char buf[1 << 16];
  Status st;
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      st = ErrnoStatus("read " + path, errno);
      break;
    }
    if (r == 0) break;
    out->append(buf, static_cast<size_t>(r));
  }
  ::close(fd);
  return st;
}

Status ReplaceFileAtomically(const std::string& dir, const std::string& name,
                             const std::string& tmp_name, const std::string& data) {
  const std::string tmp = dir + "/" + tmp_name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create " + tmp, errno);
  Status st = PwriteAll(fd, data.data(), data.size(), 0, tmp);
  if (st.ok() && ::fsync(fd) != 0) st = ErrnoStatus("fsync " + tmp, errno);
  ::close(fd);
  if (st.ok() && ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    st = ErrnoStatus("rename " + tmp + " to " + name, errno);
  }
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return SyncDir(dir);
}

Status ListDir(const std::string& dir, std::vector<std::string>* names) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("list directory " + dir, errno);
  names->clear();
  while (const dirent* e = ::readdir(d)) names->emplace_back(e->d_name);
  ::closedir(d);
  return Status::OK();
}

}  // namespace strata::ssd
