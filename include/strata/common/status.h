// Status: the error value every module boundary returns (I/O, comm, config, device).
// A Status is ok or carries a code and a one-line message that names the file, line or
// flag at fault. Cheap to copy when ok. Modelled on leveldb's Status.
#pragma once

#include <string>
#include <vector>
#include <utility>

namespace strata {

class Status {
 public:
  enum class Code { kOk = 0, kInvalidArgument, kNotFound, kCorruption, kIOError, kCommError,
                    kDeviceError, kResourceExhausted, kStopped, kUsage };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status CommError(std::string msg) { return Status(Code::kCommError, std::move(msg)); }
  static Status DeviceError(std::string msg) { return Status(Code::kDeviceError, std::move(msg)); }
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }
  // Not a failure: the job stopped early on request (a signal) and can be continued.
  // Flags that ask for what cannot work (strata-train exits 2, as for a bad flag).
  static Status Usage(std::string msg) { return Status(Code::kUsage, std::move(msg)); }
  static Status Stopped(std::string msg) { return Status(Code::kStopped, std::move(msg)); }

  static Status WithCode(Code code, std::string msg) { return Status(code, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "Corruption: seg-000012.dat: record 5 checksum mismatch"
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Builds an IOError from errno: "<what>: <strerror(errno)>".
Status ErrnoStatus(const std::string& what, int err);

// The first error of all (in order), or OK: the outcome of work split over threads.
Status FirstError(const std::vector<Status>& all);

}  // namespace strata

#define STRATA_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::strata::Status _st = (expr);            \
    if (!_st.ok()) return _st;                \
  } while (0)
