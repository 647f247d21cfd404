// BufferPool: the large byte buffers a rank fills and drains again every pass (a pull's
// replies, the write-back of the rows a pass returns), kept between their uses so that a
// buffer's pages, once backed, are written again instead of new ones being faulted in: a
// pass's rows are tens of megabytes, and backing fresh pages costs about what writing
// them does. A new buffer's pages are advised as huge pages (AdviseHugePages): backed 2 MiB
// at a time, a first pass's 50 MB reply is written in less than half the time 4 KiB faults
// take. At most `keep` buffers wait in the pool; the smallest go back to the system.
// Thread safety: every call is safe from any thread.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace strata {

// *s resized to n bytes that the caller then writes every one of, without filling them
// first (a fill costs about what writing them does).
inline void ResizeToOverwrite(std::string* s, size_t n) {
  s->resize_and_overwrite(n, [](char*, size_t size) { return size; });
}

class BufferPool {
 public:
  explicit BufferPool(size_t keep = 2) : keep_(keep) {}

  // A buffer of `bytes` bytes whose contents are unspecified (the caller writes every one):
  // the smallest kept buffer with room for them; else a new one, with an eighth more room
  // (so that the next pass's, a little larger, fits), made in place of the largest kept
  // one, which is freed (the pool keeps no buffer its passes have outgrown).
  std::string Take(size_t bytes);

  // Keeps buf (its contents dropped) for a later Take; one that holds no allocation is
  // dropped.
  void Give(std::string buf);

  size_t kept() const;

 private:
  const size_t keep_;
  mutable std::mutex mu_;
  std::vector<std::string> kept_;  // guarded by mu_
};

}  // namespace strata
