// DirLock (strata/common/dir_lock.h): flock on DIR/LOCK.
#include "strata/common/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace strata {

Status DirLock::Acquire(const std::string& dir, const std::string& what, std::unique_ptr<DirLock>* out) {
  const std::string path = dir + "/LOCK";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(what + " " + dir + ": cannot open " + path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::InvalidArgument(what + " " + dir + " is in use by another job (it holds " + path +
                                     "); give each job its own directory");
    }
    return ErrnoStatus(what + " " + dir + ": cannot lock " + path, err);
  }
  out->reset(new DirLock(fd));
  return Status::OK();
}

DirLock::~DirLock() { ::close(fd_); }

}  // namespace strata
