// BackgroundWriter: a thread that waits for a job, writes it and reports (background_writer.h).
#include "ssd/background_writer.h"

#include "ssd/file_util.h"
#include "strata/common/thread_name.h"

namespace strata::ssd {

BackgroundWriter::~BackgroundWriter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWriter::Submit(int fd, const uint8_t* data, size_t bytes, uint64_t offset, const std::string& path) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{fd, data, bytes, offset, path});
  }
  ++submitted_;
  if (!thread_.joinable()) thread_ = std::thread(&BackgroundWriter::Loop, this);
  cv_.notify_all();
}

Status BackgroundWriter::Wait(size_t pending) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return jobs_.size() <= pending; });
  return status_;
}

bool BackgroundWriter::Done(uint64_t ticket) {
  std::lock_guard lock(mu_);
  return done_ >= ticket && status_.ok();
}

void BackgroundWriter::Loop() {
  NameThisThread("ssd-writer");
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return !jobs_.empty() || stop_; });
    if (jobs_.empty()) return;  // stopped with nothing left to write
    const Job job = jobs_.front();
    lock.unlock();
    const Status st = PwriteAll(job.fd, job.data, job.bytes, job.offset, job.path);
    lock.lock();
    if (status_.ok()) status_ = st;  // a lost write fails every later wait
    jobs_.pop_front();
    ++done_;
    cv_.notify_all();
  }
}

}  // namespace strata::ssd
