// disk_bandwidth.h: the disk's own sequential bandwidth, the yardstick of the benches that
// report a fraction of it (ckpt_bench, ssd_bench). One file of `bytes` at `path` is written
// through O_DIRECT and fdatasync'd, then read back through O_DIRECT, once with 4 MiB
// requests and once with 16 MiB ones; each direction keeps its faster size, since a disk
// (a virtual one above all) may serve larger requests much faster (16 MiB reads at 1.8x the
// 4 MiB rate on one). The file is removed. A failed open, transfer or sync ends the
// process with a message naming the file. Not thread-safe; the process's only I/O while
// it runs, for a fair figure.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace strata::bench {

struct DiskBandwidth {
  double write = 0;  // bytes/s
  double read = 0;
};

namespace disk_internal {

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "disk bandwidth: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

inline double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Write then read of `bytes` (a multiple of request) in requests of `request` bytes.
inline DiskBandwidth Measure(const std::string& path, uint64_t bytes, size_t request, void* buf) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) Fail("open " + path + " with O_DIRECT");
  auto t = std::chrono::steady_clock::now();
  for (uint64_t off = 0; off < bytes; off += request) {
    if (::pwrite(fd, buf, request, static_cast<off_t>(off)) != static_cast<ssize_t>(request)) Fail("write " + path);
  }
  if (::fdatasync(fd) != 0) Fail("fdatasync " + path);
  const double write_secs = Since(t);
  ::close(fd);
  fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) Fail("open " + path + " with O_DIRECT");
  t = std::chrono::steady_clock::now();
  for (uint64_t off = 0; off < bytes; off += request) {
    if (::pread(fd, buf, request, static_cast<off_t>(off)) != static_cast<ssize_t>(request)) Fail("read " + path);
  }
  const double read_secs = Since(t);
  ::close(fd);
  return {static_cast<double>(bytes) / write_secs, static_cast<double>(bytes) / read_secs};
}

}  // namespace disk_internal

// The faster of 4 MiB and 16 MiB requests in each direction, over `bytes` rounded up to
// 16 MiB. The buffer is on 2 MiB huge pages where the kernel gives them: an O_DIRECT
// transfer pins its buffer's pages, and with 4 KiB pages the pinning held one disk at
// 1.8 GB/s that wrote 2.4 GB/s from huge pages, a rate the stores reach too.
inline DiskBandwidth MeasureDiskBandwidth(const std::string& path, uint64_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  constexpr size_t kRequests[] = {size_t{4} << 20, size_t{16} << 20};
  constexpr size_t kLargest = kRequests[1];
  bytes = (bytes + kLargest - 1) / kLargest * kLargest;
  void* buf = nullptr;
  if (::posix_memalign(&buf, kHugePage, kLargest) != 0) disk_internal::Fail("allocating the transfer buffer");
  ::madvise(buf, kLargest, MADV_HUGEPAGE);  // a hint: failure costs only speed
  std::memset(buf, 0x5A, kLargest);
  DiskBandwidth best;
  for (size_t request : kRequests) {
    const DiskBandwidth bw = disk_internal::Measure(path, bytes, request, buf);
    best.write = std::max(best.write, bw.write);
    best.read = std::max(best.read, bw.read);
  }
  ::unlink(path.c_str());
  std::free(buf);
  return best;
}

}  // namespace strata::bench
