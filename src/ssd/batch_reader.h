// BatchReader: performs a list of positioned reads with many in flight through io_uring,
// reusing a fixed pool of aligned buffers (queue_depth x max read size), and hands each
// finished read to a callback while later reads are still in flight. Reads are issued in
// list order; callers sort and coalesce them first.
//
// Thread safety: one BatchReader per thread (each owns its ring); distinct readers may run
// concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <liburing.h>

#include "ssd/file_util.h"
#include "strata/common/status.h"

namespace strata::ssd {

struct ReadOp {
  int fd;
  uint64_t offset;  // aligned to 4096 for O_DIRECT files
  uint32_t length;  // at most BatchReader's max_read_bytes, multiple of 4096
  const std::string* path;  // for messages
};

class BatchReader {
 public:
  BatchReader(int queue_depth, size_t max_read_bytes);
  ~BatchReader();
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;

  using DoneFn = std::function<Status(size_t op, const uint8_t* data)>;

  // Runs ops; for each, done(op index, data) once its whole length was read. A short read
  // (file shorter than the op) is Corruption naming the file. Stops at the first error,
  // from the disk or from `done`, after draining reads in flight.
  Status Run(const std::vector<ReadOp>& ops, const DoneFn& done);

 private:
  Status RunSync(const std::vector<ReadOp>& ops, const DoneFn& done);
  static Status Complete(const ReadOp& r, int res, uint8_t* buf);
  Status Submit(const std::vector<ReadOp>& ops, size_t op, size_t buffer);
  struct Flight;  // one Run's progress
  // Submits ops from flight->next while buffers are free and no error was seen.
  void SubmitWhileFree(const std::vector<ReadOp>& ops, Flight* flight);
  // Waits for one completion at least, then hands every completed read to done.
  Status ReapCompletions(const std::vector<ReadOp>& ops, const DoneFn& done, Flight* flight);

  const int depth_;
  const size_t max_read_bytes_;
  io_uring ring_;
  bool ring_ok_ = false;
  AlignedBuffer buffers_;
};

}  // namespace strata::ssd
