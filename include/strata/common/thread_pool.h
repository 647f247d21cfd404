// ThreadPool: a fixed set of threads that run ParallelFor bodies. ParallelFor blocks until
// every index has run; indices are handed out dynamically, so bodies must not depend on
// which thread runs them. The calling thread works too. One ParallelFor at a time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1 (including the caller)
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()) + 1; }

  // Runs body(i) for i in [0, n).
  void ParallelFor(size_t n, const std::function<void(size_t)>& body);

 private:
  void Work();
  void RunIndices();

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  // protected by mu_
  const std::function<void(size_t)>* body_ = nullptr;
  size_t n_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
};

// Runs body(i) for i in [0, n) on pool's threads, or in order on the calling thread when
// pool is null.
void ParallelFor(ThreadPool* pool, size_t n, const std::function<void(size_t)>& body);

}  // namespace strata
