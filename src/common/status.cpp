// Status formatting and errno conversion.
#include "strata/common/status.h"

#include <cerrno>
#include <cstring>

namespace strata {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "Invalid argument"; break;
    case Code::kNotFound: name = "Not found"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kIOError: name = "I/O error"; break;
    case Code::kCommError: name = "Comm error"; break;
    case Code::kDeviceError: name = "Device error"; break;
    case Code::kResourceExhausted: name = "Resource exhausted"; break;
    case Code::kStopped: name = "Stopped"; break;
    case Code::kUsage: name = "Usage"; break;
  }
  return std::string(name) + ": " + message_;
}

Status ErrnoStatus(const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) {
    return Status::ResourceExhausted(what + ": " + std::strerror(err));
  }
  if (err == ENOENT) return Status::NotFound(what + ": " + std::strerror(err));
  return Status::IOError(what + ": " + std::strerror(err));
}

Status FirstError(const std::vector<Status>& all) {
  for (const Status& s : all) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace strata
