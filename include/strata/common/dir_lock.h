// DirLock: one process's claim on a directory, so two jobs never share an SSD-PS or a
// checkpoint directory. An exclusive advisory lock (flock) on DIR/LOCK, held until the
// DirLock is destroyed; the kernel drops it when the process dies, so a crash (kill -9)
// leaves no stale lock. Thread safety: none needed (acquired once, then only held).
#pragma once

#include <memory>
#include <string>

#include "strata/common/status.h"

namespace strata {

class DirLock {
 public:
  // Locks `dir` (which must exist). `what` names it in errors ("SSD-PS directory"). Fails
  // with a message naming the directory when another process holds it.
  static Status Acquire(const std::string& dir, const std::string& what, std::unique_ptr<DirLock>* out);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace strata
