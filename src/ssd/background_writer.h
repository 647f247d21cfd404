// BackgroundWriter: positional writes done in the order submitted, on a thread of its own,
// so that whoever hands it full buffers goes on filling others while the disk takes them
// (the Appender's ring of buffers). The thread starts with the first write and ends with
// the writer.
//
// Thread safety: the calls are made by one thread at a time (the owner); a submitted buffer
// must stay unchanged until a Wait or Done says its write is done.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "strata/common/status.h"

namespace strata::ssd {

class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter();  // finishes the queued writes, then ends the thread
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues a write of `bytes` of `data` at `offset` of fd (PwriteAll; errors name `path`).
  void Submit(int fd, const uint8_t* data, size_t bytes, uint64_t offset, const std::string& path);
  // Waits until at most `pending` writes are queued or under way: every write but the
  // last `pending` submitted is done. The first failed write's status from then on; OK
  // while every write succeeded.
  Status Wait(size_t pending = 0);
  // Writes submitted so far: a ticket for Done.
  uint64_t submitted() const { return submitted_; }
  // Whether the first `ticket` writes submitted are done, and every write so far succeeded.
  bool Done(uint64_t ticket);

 private:
  struct Job {
    int fd = -1;
    const uint8_t* data = nullptr;
    size_t bytes = 0;
    uint64_t offset = 0;
    std::string path;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;  // guarded by mu_: submitted and not yet written, the first under way
  bool stop_ = false;     // guarded by mu_
  Status status_;         // guarded by mu_: the first failed write's, else OK
  uint64_t done_ = 0;     // guarded by mu_: writes finished
  uint64_t submitted_ = 0;  // the owner's
  std::thread thread_;
};

}  // namespace strata::ssd
