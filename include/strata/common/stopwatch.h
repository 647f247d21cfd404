// Stopwatch: wall-clock seconds since construction or the last Restart, on the monotonic
// clock. Not thread-safe; one per measuring thread.
#pragma once

#include <chrono>

namespace strata {

class Stopwatch {
 public:
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Seconds so far, and starts again.
  double Lap() {
    const Clock::time_point now = Clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace strata
