// ExtentFile: writes the bytes of a file's extents (the contiguous datasets of a full
// checkpoint's rank file, at the offsets HDF5 gave them), each extent in order from its
// start, once HDF5 has laid the file out and closed it. A write whose file offset, length
// and memory are 4 KiB-aligned goes through an O_DIRECT descriptor where the filesystem
// takes one: through the page cache, a checkpoint's copies and their write-back cost more
// CPU than the rest of the checkpoint (and evict the training's pages); any other write,
// through a plain descriptor. Finish checks that every extent got exactly its bytes and
// fsyncs the file. ExtentReader: reads byte ranges of such a file back the same way (the
// aligned head of an aligned range O_DIRECT, the rest through the page cache), where a
// cold read through the page cache took more CPU than the disk took time. Thread safety:
// ExtentFile, one thread at a time; ExtentReader's calls may run on several threads at
// once (positional reads, no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata::ckpt {

namespace extent_internal {

// A file's plain descriptor and, where the filesystem takes one, its O_DIRECT descriptor
// (-1 where not); closes both.
struct Descriptors {
  Descriptors() = default;
  ~Descriptors();
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  // IOError naming the file and `purpose` where the plain descriptor cannot be opened.
  Status Open(const std::string& path, int flags, const char* purpose);

  int fd = -1;
  int direct_fd = -1;
};

}  // namespace extent_internal

class ExtentFile {
 public:
  static constexpr size_t kAlign = 4096;
  struct Extent {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };

  // Opens the existing file at path for writing its extents.
  static Status Create(const std::string& path, std::vector<Extent> extents, std::unique_ptr<ExtentFile>* out);
  ExtentFile(const ExtentFile&) = delete;
  ExtentFile& operator=(const ExtentFile&) = delete;

  // Writes the next `bytes` of extent e. IOError naming the file on a failed write;
  // InvalidArgument past the extent's end.
  Status Append(size_t e, const void* data, size_t bytes);
  // Every extent full, then fsync.
  Status Finish();

 private:
  ExtentFile(std::string path, std::vector<Extent> extents)
      : path_(std::move(path)), extents_(std::move(extents)), done_(extents_.size()) {}
  Status WriteWhole(int fd, const uint8_t* data, size_t bytes, uint64_t offset);

  std::string path_;
  std::vector<Extent> extents_;
  std::vector<uint64_t> done_;  // bytes written, per extent
  extent_internal::Descriptors fds_;
};

class ExtentReader {
 public:
  static Status Open(const std::string& path, std::unique_ptr<ExtentReader>* out);
  ExtentReader(const ExtentReader&) = delete;
  ExtentReader& operator=(const ExtentReader&) = delete;

  // Reads the file's bytes [offset, offset + bytes) into data. IOError naming the file
  // where a read fails or the file ends first.
  Status Read(uint64_t offset, size_t bytes, void* data) const;
  // Announces a read of the range to the kernel's readahead, for the reads that go
  // through the page cache (all of them where O_DIRECT is refused): ranges of several
  // extents read side by side, which readahead would not guess, then load together.
  void WillNeed(uint64_t offset, size_t bytes) const;

 private:
  explicit ExtentReader(std::string path) : path_(std::move(path)) {}

  std::string path_;
  extent_internal::Descriptors fds_;
};

}  // namespace strata::ckpt
