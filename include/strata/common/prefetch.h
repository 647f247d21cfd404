// PrefetchSpan: a hint to the CPU to load every cache line of a byte range, for loops that
// reach rows or blocks spread through a large table a few iterations ahead of their use.
// A hint only: it neither faults nor changes a result. Thread safety: stateless.
#pragma once

#include <cstddef>

namespace strata {

// Loads the cache lines of [p, p + bytes), the last one included when p is not aligned to
// a line. Nothing for bytes == 0.
inline void PrefetchSpan(const void* p, size_t bytes) {
  if (bytes == 0) return;
  constexpr size_t kLine = 64;
  const char* c = static_cast<const char*>(p);
  for (size_t at = 0; at < bytes; at += kLine) __builtin_prefetch(c + at);
  __builtin_prefetch(c + bytes - 1);
}

}  // namespace strata
