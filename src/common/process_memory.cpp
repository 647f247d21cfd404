// Process memory (strata/common/process_memory.h): /proc/self/status, /proc/meminfo, the
// cgroup v2 files, and malloc_trim.
#include "strata/common/process_memory.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>

namespace strata {

namespace {

// The kB figure of the line of `path` that `format` reads (e.g. "VmHWM: %ld kB"), in bytes.
int64_t ProcBytes(const char* path, const char* format) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char line[256];
  int64_t kb = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, format, &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

// The first number in the file at path, or -1 (absent, or not a number: cgroup's "max").
int64_t FileNumber(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  long long v = -1;
  if (std::fscanf(f, "%lld", &v) != 1) v = -1;
  std::fclose(f);
  return v;
}

}  // namespace

int64_t PeakRssBytes() { return ProcBytes("/proc/self/status", "VmHWM: %ld kB"); }

int64_t CurrentRssBytes() { return ProcBytes("/proc/self/status", "VmRSS: %ld kB"); }

int64_t AvailableMemoryBytes() {
  int64_t have = ProcBytes("/proc/meminfo", "MemAvailable: %ld kB");
  const int64_t max = FileNumber("/sys/fs/cgroup/memory.max"), current = FileNumber("/sys/fs/cgroup/memory.current");
  if (max >= 0 && current >= 0 && (have <= 0 || max - current < have)) have = std::max<int64_t>(1, max - current);
  return have;
}

void ReturnFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace strata
