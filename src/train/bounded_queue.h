// BoundedQueue: a blocking FIFO of at most `capacity` items between two pipeline stages.
// Push blocks while full; Pop blocks while empty. Close wakes both sides: Push then fails
// and Pop drains what is left, then fails. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace strata {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // False when the queue was closed (the item is dropped).
  bool Push(T item) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // False when the queue is closed and empty.
  bool Pop(T* item) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  // protected by mu_
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace strata
