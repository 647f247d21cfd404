// ExtentFile: writes the bytes of a file's extents (the contiguous datasets of a full
// checkpoint's rank file, at the offsets HDF5 gave them), each extent in order from its
// start, once HDF5 has laid the file out and closed it. A write whose file offset, length
// and memory are 4 KiB-aligned goes through an O_DIRECT descriptor where the filesystem
// takes one: through the page cache, a checkpoint's copies and their write-back cost more
// CPU than the rest of the checkpoint (and evict the training's pages); any other write,
// through a plain descriptor. Finish checks that every extent got exactly its bytes and
// fsyncs the file. Not thread-safe: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata::ckpt {

class ExtentFile {
 public:
  static constexpr size_t kAlign = 4096;
  struct Extent {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };

  // Opens the existing file at path for writing its extents.
  static Status Create(const std::string& path, std::vector<Extent> extents, std::unique_ptr<ExtentFile>* out);
  ~ExtentFile();
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
  int fd_ = -1;
  int direct_fd_ = -1;  // -1 where the filesystem refuses O_DIRECT
};

}  // namespace strata::ckpt
