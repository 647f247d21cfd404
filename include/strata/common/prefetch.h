// PrefetchLine and PrefetchSpan: hints to the CPU to load a cache line, or every cache line
// of a byte range, for loops that reach rows, slots or blocks spread through a large table
// a few iterations ahead of their use. Every prefetch of the project goes through
// PrefetchLine: GCC takes a function made of prefetches alone for one without effects and
// drops a call to it that it has not inlined yet (GCC 12 at -O2 and -O3 dropped such calls
// in the host tables' loops, the Bloom filter's lookup and the SSD-PS index's), so
// PrefetchLine adds an empty asm statement the optimizer must keep, which emits nothing.
// A hint only: it neither faults nor changes a result. Thread safety: stateless.
#pragma once

#include <cstddef>

namespace strata {

// Loads the cache line that holds p.
inline void PrefetchLine(const void* p) {
  __builtin_prefetch(p);
  asm volatile("" : : "r"(p));  // an effect, so no call that leads here is dropped
}

// Loads the cache lines of [p, p + bytes), the last one included when p is not aligned to
// a line. Nothing for bytes == 0.
inline void PrefetchSpan(const void* p, size_t bytes) {
  if (bytes == 0) return;
  constexpr size_t kLine = 64;
  const char* c = static_cast<const char*>(p);
  for (size_t at = 0; at < bytes; at += kLine) PrefetchLine(c + at);
  PrefetchLine(c + bytes - 1);
}

}  // namespace strata
