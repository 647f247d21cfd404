// SpareThreads: a ThreadPool that bulk calls borrow when it is free. ParallelFor runs on the
// pool when no other call holds it, and on the calling thread otherwise, so concurrent
// callers never wait for each other; a body must not depend on the thread that runs it, so
// results are the same either way. Thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "strata/common/thread_pool.h"

namespace strata {

// The least keys worth a thread of their own: a bulk call of fewer stays on its caller, and
// one of more hands its threads at least this many each (handing work over costs more).
constexpr size_t kKeysWorthAThread = 16384;

class SpareThreads {
 public:
  // threads <= 1: every body runs on its caller.
  explicit SpareThreads(int threads) : pool_(threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr) {}

  // body(i) for i in [0, n).
  void ParallelFor(size_t n, const std::function<void(size_t)>& body) {
    std::unique_lock lock(mu_, std::defer_lock);
    if (pool_ && n > 1 && lock.try_lock()) {
      pool_->ParallelFor(n, body);
      return;
    }
    for (size_t i = 0; i < n; ++i) body(i);
  }

  // body(begin, end) over [0, n) in ranges of `chunk`.
  void ForRanges(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& body) {
    ParallelFor((n + chunk - 1) / chunk, [&](size_t c) { body(c * chunk, std::min(n, (c + 1) * chunk)); });
  }

 private:
  std::unique_ptr<ThreadPool> pool_;
  std::mutex mu_;  // held by the call using pool_
};

}  // namespace strata
