// ThreadPool: generation-counted fork/join over a shared index counter.
#include "strata/common/thread_pool.h"

#include "strata/common/thread_name.h"

namespace strata {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) {
    threads_.emplace_back([this] {
      NameThisThread("strata-worker");
      Work();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::RunIndices() {
  std::unique_lock lock(mu_);
  while (next_ < n_) {
    const size_t i = next_++;
    const auto* body = body_;
    lock.unlock();
    (*body)(i);
    lock.lock();
    ++finished_;
  }
  if (finished_ == n_) done_.notify_all();
}

void ThreadPool::Work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_;
    }
    RunIndices();
    std::lock_guard lock(mu_);
    if (--active_ == 0) done_.notify_all();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& body) {
  if (n == 0) return;
  if (threads_.empty() || n == 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  {
    std::lock_guard lock(mu_);
    body_ = &body;
    n_ = n;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  RunIndices();
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return finished_ == n_ && active_ == 0; });
  body_ = nullptr;
}

void ParallelFor(ThreadPool* pool, size_t n, const std::function<void(size_t)>& body) {
  if (pool != nullptr) {
    pool->ParallelFor(n, body);
  } else {
    for (size_t i = 0; i < n; ++i) body(i);
  }
}

}  // namespace strata
