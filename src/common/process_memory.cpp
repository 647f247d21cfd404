// Process memory (strata/common/process_memory.h): /proc/self/status and malloc_trim.
#include "strata/common/process_memory.h"

#include <malloc.h>

#include <cstdio>

namespace strata {

namespace {

// The kB figure of /proc/self/status's line `format` reads (e.g. "VmHWM: %ld kB"), in bytes.
int64_t StatusBytes(const char* format) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  int64_t kb = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, format, &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

}  // namespace

int64_t PeakRssBytes() { return StatusBytes("VmHWM: %ld kB"); }

int64_t CurrentRssBytes() { return StatusBytes("VmRSS: %ld kB"); }

void ReturnFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace strata
