// Durability helpers for checkpoint publishing (see file_sync.h).
#include "ckpt/file_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace strata::ckpt {
namespace {

Status SyncFd(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open " + path + " to sync", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status::OK() : ErrnoStatus("fsync " + path, err);
}

}  // namespace

Status SyncPath(const std::string& path) { return SyncFd(path, O_RDONLY); }

Status SyncDir(const std::string& dir) { return SyncFd(dir, O_RDONLY | O_DIRECTORY); }

Status ReplaceFileDurably(const std::string& dir, const std::string& name, const std::string& data) {
  const std::string tmp = dir + "/" + name + ".tmp", final_path = dir + "/" + name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create " + tmp, errno);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus("write " + tmp, err);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus("fsync " + tmp, err);
  }
  if (::close(fd) != 0) return ErrnoStatus("close " + tmp, errno);
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    return ErrnoStatus("rename " + tmp + " to " + final_path, errno);
  }
  return SyncDir(dir);
}

Status ReadSmallFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus("cannot open " + path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  *out = ss.str();
  return Status::OK();
}

}  // namespace strata::ckpt
