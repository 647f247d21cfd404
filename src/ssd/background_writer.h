// BackgroundWriter: one positional write at a time on a thread of its own, so that whoever
// hands it a full buffer can fill the next one while the disk takes this one (the
// Appender's double buffering). The thread starts with the first write and ends with the
// writer.
//
// Thread safety: Submit and Wait are called by one thread at a time (the owner); the
// submitted buffer must stay unchanged until Wait returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "strata/common/status.h"

namespace strata::ssd {

class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter();  // finishes the pending write, then ends the thread
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Starts writing `bytes` of `data` at `offset` of fd (PwriteAll; errors name `path`).
  // REQUIRES: no write pending (Wait returned since the last Submit).
  void Submit(int fd, const uint8_t* data, size_t bytes, uint64_t offset, const std::string& path);
  // Waits for the pending write, if any. The first failed write's status from then on;
  // OK while every write succeeded.
  Status Wait();

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
  Job job_;             // guarded by mu_
  bool pending_ = false;  // guarded by mu_: job_ submitted and not yet written
  bool stop_ = false;     // guarded by mu_
  Status status_;         // guarded by mu_: the first failed write's, else OK
  std::thread thread_;
};

}  // namespace strata::ssd
