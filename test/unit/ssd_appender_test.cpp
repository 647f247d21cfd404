// The Appender's ring of buffers: while full buffers are written in the background and the
// next one fills, every appended record is readable at every moment, from a buffer (Buffered)
// or else from the file; Flush leaves every record on disk, the partial last unit's free
// places zeroed even when the buffer held older records. Whatever the writer thread's
// timing, the checks hold: a record Buffered does not serve was written by a write that
// already finished.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "ssd/file_util.h"
#include "ssd/segment.h"
#include "ssd_test_util.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd {
namespace {

constexpr size_t kRowBytes = 64;

// The key of record r as read from the buffer or the file; 0 when it does not decode.
uint64_t KeyOf(const Appender& appender, const Segment& seg, const RecordLayout& layout, uint64_t r) {
  std::vector<uint8_t> copy(layout.record_bytes);
  if (const uint8_t* p = appender.Buffered(r)) {
    std::memcpy(copy.data(), p, copy.size());
  } else {
    size_t got = 0;
    if (!PreadAll(seg.fd, copy.data(), copy.size(), layout.Offset(r), seg.path, &got).ok() || got != copy.size()) return 0;
  }
  uint64_t key = 0, seq = 0;
  return DecodeRecord(copy.data(), kRowBytes, &key, &seq) ? key : 0;
}

}  // namespace

TEST_CASE("ssd: appended records stay readable while full buffers are written in the background") {
  for (const size_t buffers : {2, 3, 4}) {
    CAPTURE(buffers);
    ssd_test::TempDir dir;
    const RecordLayout layout = RecordLayout::For(kRowBytes);
    std::atomic<uint64_t> written{0};
    Appender appender(layout, 2 * layout.unit_bytes, buffers, &written);  // two units a buffer
    int fd = -1;
    REQUIRE(OpenSegmentFile(dir.path(), 1, true, false, &fd).ok());
    auto seg = std::make_shared<Segment>(1, dir.path() + "/" + SegmentFileName(1), fd, 0);
    REQUIRE(appender.Start(seg).ok());
    std::vector<uint8_t> row(kRowBytes, 7);
    // Once round the ring and one more unit, then a partial unit in the first buffer again.
    const uint64_t full_units = 2 * buffers + 1, n = full_units * layout.per_unit + 5;
    int unreadable = 0;
    for (uint64_t r = 0; r < n; ++r) {
      uint64_t record = 0;
      REQUIRE(appender.Append(1000 + r, r + 1, row.data(), &record).ok());
      REQUIRE(record == r);
      for (uint64_t k = 0; k <= r; ++k) unreadable += KeyOf(appender, *seg, layout, k) != 1000 + k;
    }
    CHECK(unreadable == 0);
    REQUIRE(appender.Flush().ok());
    int buffered = 0;
    for (uint64_t k = 0; k < n; ++k) buffered += appender.Buffered(k) != nullptr;
    CHECK(buffered == 5);  // the partial last unit, kept for the appends to come
    CHECK(written.load() == kHeaderBytes + (full_units + 1) * layout.unit_bytes);

    // The partial unit's free places on disk are zero, though the buffer they were cut
    // from held records of an earlier fill.
    std::vector<uint8_t> unit(layout.unit_bytes);
    size_t got = 0;
    REQUIRE(PreadAll(fd, unit.data(), unit.size(), layout.Offset(full_units * layout.per_unit), seg->path, &got).ok());
    REQUIRE(got == unit.size());
    const size_t used = 5 * layout.record_bytes;
    CHECK(std::all_of(unit.begin() + used, unit.end(), [](uint8_t b) { return b == 0; }));
    uint64_t key = 0, seq = 0;
    REQUIRE(DecodeRecord(unit.data() + 4 * layout.record_bytes, kRowBytes, &key, &seq));
    CHECK(key == 1000 + n - 1);
  }
}

}  // namespace strata::ssd
