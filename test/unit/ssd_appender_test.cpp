// The Appender's ring of buffers: while full buffers are written in the background and the
// next one fills, every appended record is readable at every moment, from a buffer (Buffered)
// or else from the file; Flush leaves every record on disk, the partial last unit's free
// places zeroed even when the buffer held older records. A roll to the next segment waits
// for no write, and the rolled segment's records stay readable the same way. Whatever the
// writer thread's timing, the checks hold: a record Buffered does not serve was written by
// a write that already finished.
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
  if (const uint8_t* p = appender.Buffered(seg, r)) {
    std::memcpy(copy.data(), p, copy.size());
  } else {
    size_t got = 0;
    if (!PreadAll(seg.fd, copy.data(), copy.size(), layout.Offset(r), seg.path, &got).ok() || got != copy.size()) return 0;
  }
  uint64_t key = 0, seq = 0;
  return DecodeRecord(copy.data(), kRowBytes, &key, &seq) ? key : 0;
}

std::shared_ptr<Segment> NewSegment(const ssd_test::TempDir& dir, uint64_t number) {
  int fd = -1;
  REQUIRE(OpenSegmentFile(dir.path(), number, true, false, &fd).ok());
  return std::make_shared<Segment>(number, dir.path() + "/" + SegmentFileName(number), fd, 0);
}

// Whether the free record places of unit `unit` of seg's file, past its first `used`, are zero.
bool FreePlacesZero(const Segment& seg, const RecordLayout& layout, uint64_t unit, size_t used) {
  std::vector<uint8_t> bytes(layout.unit_bytes);
  size_t got = 0;
  REQUIRE(PreadAll(seg.fd, bytes.data(), bytes.size(), layout.Offset(unit * layout.per_unit), seg.path, &got).ok());
  REQUIRE(got == bytes.size());
  return std::all_of(bytes.begin() + used * layout.record_bytes, bytes.end(), [](uint8_t b) { return b == 0; });
}

}  // namespace

TEST_CASE("ssd: appended records stay readable while full buffers are written in the background") {
  for (const size_t buffers : {2, 3, 4}) {
    CAPTURE(buffers);
    ssd_test::TempDir dir;
    const RecordLayout layout = RecordLayout::For(kRowBytes);
    std::atomic<uint64_t> written{0};
    Appender appender(layout, 2 * layout.unit_bytes, buffers, &written);  // two units a buffer
    auto seg = NewSegment(dir, 1);
    REQUIRE(appender.Roll(seg).ok());
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
    for (uint64_t k = 0; k < n; ++k) buffered += appender.Buffered(*seg, k) != nullptr;
    CHECK(buffered == 5);  // the partial last unit, kept for the appends to come
    CHECK(written.load() == kHeaderBytes + (full_units + 1) * layout.unit_bytes);

    // The partial unit's free places on disk are zero, though the buffer they were cut
    // from held records of an earlier fill.
    CHECK(FreePlacesZero(*seg, layout, full_units, 5));
    std::vector<uint8_t> unit(layout.unit_bytes);
    size_t got = 0;
    REQUIRE(PreadAll(seg->fd, unit.data(), unit.size(), layout.Offset(full_units * layout.per_unit), seg->path, &got).ok());
    uint64_t key = 0, seq = 0;
    REQUIRE(DecodeRecord(unit.data() + 4 * layout.record_bytes, kRowBytes, &key, &seq));
    CHECK(key == 1000 + n - 1);
  }
}

TEST_CASE("ssd: a roll hands the segment's last buffer to the disk and its records stay readable") {
  for (const size_t buffers : {2, 3}) {
    CAPTURE(buffers);
    ssd_test::TempDir dir;
    const RecordLayout layout = RecordLayout::For(kRowBytes);
    std::atomic<uint64_t> written{0};
    Appender appender(layout, 2 * layout.unit_bytes, buffers, &written);  // two units a buffer
    std::vector<std::shared_ptr<Segment>> segs;
    std::vector<uint8_t> row(kRowBytes, 7);
    uint64_t ticket = 0, key = 1000;
    int unreadable = 0;
    // Three segments: the first ends mid-buffer on a partial unit, the second on a full
    // buffer, the third stays open. Every record of all of them is readable after every append.
    const uint64_t lengths[] = {layout.per_unit + 3, 2 * layout.per_unit, layout.per_unit + 1};
    for (uint64_t s = 0; s < 3; ++s) {
      segs.push_back(NewSegment(dir, s + 1));
      REQUIRE(appender.Roll(segs.back()).ok());
      ticket = appender.Ticket();
      // The rolled segment's last buffer is still served, written or not.
      if (s > 0) CHECK(appender.Buffered(*segs[s - 1], lengths[s - 1] - 1) != nullptr);
      for (uint64_t r = 0; r < lengths[s]; ++r) {
        uint64_t record = 0;
        const uint64_t k = key++;
        REQUIRE(appender.Append(k, k, row.data(), &record).ok());
        REQUIRE(record == r);
        uint64_t expect = 1000;
        for (uint64_t t = 0; t <= s; ++t) {
          for (uint64_t k = 0; k < (t < s ? lengths[t] : r + 1); ++k) unreadable += KeyOf(appender, *segs[t], layout, k) != expect++;
        }
      }
    }
    CHECK(unreadable == 0);
    REQUIRE(appender.Flush().ok());
    CHECK(appender.Written(ticket));  // Flush waits for every write, the rolls' too
    // The rolled segments are whole on disk: the first's partial unit zero-padded.
    CHECK(FreePlacesZero(*segs[0], layout, 1, 3));
    for (uint64_t s = 0, k = 1000; s < 2; ++s) {
      for (uint64_t r = 0; r < lengths[s]; ++r) {
        std::vector<uint8_t> copy(layout.record_bytes);
        size_t got = 0;
        REQUIRE(PreadAll(segs[s]->fd, copy.data(), copy.size(), layout.Offset(r), segs[s]->path, &got).ok());
        uint64_t read_key = 0, seq = 0;
        REQUIRE(DecodeRecord(copy.data(), kRowBytes, &read_key, &seq));
        CHECK(read_key == k++);
      }
    }
    CHECK(written.load() == 3 * kHeaderBytes + (2 + 2 + 2) * layout.unit_bytes);
  }
}

}  // namespace strata::ssd
