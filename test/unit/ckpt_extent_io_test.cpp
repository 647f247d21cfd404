// ExtentReader: byte ranges of a file read back exactly, through O_DIRECT (a disk) or not
// (tmpfs), whatever the alignment of the offset, the length and the memory; a range past
// the file's end and a missing file are errors naming the file.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include "ckpt/extent_io.h"
#include "ssd_test_util.h"

namespace strata {
namespace {

using ckpt::ExtentReader;

TEST_CASE("ckpt: an extent reader reads any range of a file as written") {
  constexpr size_t kBytes = 3 * 4096 + 100;
  std::vector<uint8_t> content(kBytes);
  for (size_t i = 0; i < kBytes; ++i) content[i] = static_cast<uint8_t>(i * 131 % 251);
  for (const bool tmpfs : {false, true}) {  // a disk takes O_DIRECT; tmpfs only from Linux 6.6
    CAPTURE(tmpfs);
    ssd_test::TempDir dir(tmpfs);
    const std::string path = dir.path() + "/rows.bin";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(content.data()), kBytes);
    std::unique_ptr<ExtentReader> reader;
    REQUIRE(ExtentReader::Open(path, &reader).ok());
    std::unique_ptr<uint8_t, decltype(&std::free)> memory(static_cast<uint8_t*>(std::aligned_alloc(4096, 4 * 4096)),
                                                          &std::free);
    struct Range {
      uint64_t offset;
      size_t bytes, memory_offset;
    };
    // Aligned; aligned with a tail; the file's end; an unaligned offset; unaligned memory.
    for (const Range r : {Range{4096, 8192, 0}, Range{0, 8192 + 50, 0}, Range{8192, 4096 + 100, 0},
                          Range{100, 5000, 0}, Range{4096, 8192, 1}}) {
      CAPTURE(r.offset);
      CAPTURE(r.bytes);
      CAPTURE(r.memory_offset);
      uint8_t* out = memory.get() + r.memory_offset;
      std::fill(out, out + r.bytes, 0);
      REQUIRE(reader->Read(r.offset, r.bytes, out).ok());
      CHECK(std::equal(out, out + r.bytes, content.begin() + static_cast<ptrdiff_t>(r.offset)));
    }
    const Status past_end = reader->Read(8192, 8192, memory.get());
    CHECK(past_end.code() == Status::Code::kIOError);
    CHECK(past_end.message().find(path + ": read of") != std::string::npos);
    CHECK(past_end.message().find("the file ends first") != std::string::npos);
    const Status missing = ExtentReader::Open(path + ".gone", &reader);
    CHECK(missing.code() == Status::Code::kIOError);
    CHECK(missing.message().find(path + ".gone: cannot open for reading") != std::string::npos);
  }
}

}  // namespace
}  // namespace strata
