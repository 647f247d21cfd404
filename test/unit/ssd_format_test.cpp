// SSD-PS building blocks: crc32c against published vectors, record layout arithmetic,
// record/header/manifest encoding and their damage checks, and the key index.
#include <doctest/doctest.h>

#include <cstring>
#include <unordered_map>

#include "ssd/crc32c.h"
#include "ssd/record_index.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd {

TEST_CASE("ssd: crc32c matches the published check values") {
  CHECK(Crc32c(0, "123456789", 9) == 0xE3069283u);
  const std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  CHECK(Crc32c(0, zeros.data(), 32) == 0x8A9136AAu);
  CHECK(Crc32c(0, ones.data(), 32) == 0x62A8AB43u);
  // Extending in pieces equals one pass.
  CHECK(Crc32c(Crc32c(0, "12345", 5), "6789", 4) == 0xE3069283u);
}

TEST_CASE("ssd: crc32c of many ranges side by side equals each range's own; records encoded and decoded so") {
  std::vector<uint8_t> bytes(9 * 101);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 131 + i / 7);
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{80}, size_t{101}}) {
    for (size_t count = 0; count <= 9; ++count) {
      CAPTURE(n);
      CAPTURE(count);
      std::vector<const uint8_t*> data;
      for (size_t i = 0; i < count; ++i) data.push_back(&bytes[i * 101]);
      std::vector<uint32_t> crcs(count);
      Crc32cEach(data.data(), count, n, crcs.data());
      for (size_t i = 0; i < count; ++i) CHECK(crcs[i] == Crc32c(0, data[i], n));
    }
  }
  constexpr size_t kRow = 24, kRec = kRecordOverhead + kRow, kCount = 6;
  std::vector<uint8_t> rows(kCount * kRow), each(kCount * kRec), together(kCount * kRec);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(i * 29);
  const uint64_t keys[kCount] = {3, 1, 4, 1, 5, 9};
  uint8_t* dst[kCount];
  for (size_t i = 0; i < kCount; ++i) {
    EncodeRecord(&each[i * kRec], keys[i], 100 + i, &rows[i * kRow], kRow);
    dst[i] = &together[(kCount - 1 - i) * kRec];  // places in any order
  }
  EncodeRecords(dst, keys, 100, rows.data(), kCount, kRow);
  for (size_t i = 0; i < kCount; ++i) CHECK(std::memcmp(dst[i], &each[i * kRec], kRec) == 0);
  uint64_t got_keys[kCount], seqs[kCount];
  CHECK(DecodeRecords(dst, kCount, kRow, got_keys, seqs) == kCount);
  for (size_t i = 0; i < kCount; ++i) {
    CHECK(got_keys[i] == keys[i]);
    CHECK(seqs[i] == 100 + i);
  }
  dst[3][kRecordRowOffset + 5] ^= 1;  // record 3's row damaged: the first bad one found
  CHECK(DecodeRecords(dst, kCount, kRow, got_keys, seqs) == 3);
}

TEST_CASE("ssd: record layout never lets a record straddle a unit") {
  const RecordLayout l64 = RecordLayout::For(64);
  CHECK(l64.record_bytes == 84);
  CHECK(l64.unit_bytes == 4096);
  CHECK(l64.per_unit == 48);
  CHECK(l64.Offset(0) == 4096);
  CHECK(l64.Offset(47) == 4096 + 47 * 84);
  CHECK(l64.Offset(48) == 8192);
  CHECK(l64.ExtentBytes(0) == 4096);
  CHECK(l64.ExtentBytes(49) == 4096 * 3);
  const RecordLayout big = RecordLayout::For(5000);
  CHECK(big.unit_bytes == 8192);
  CHECK(big.per_unit == 1);
  CHECK(big.Offset(2) == 4096 + 2 * 8192);
}

TEST_CASE("ssd: records, headers and manifests round trip and detect damage") {
  std::vector<uint8_t> row(24), rec(44);
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<uint8_t>(i * 7);
  EncodeRecord(rec.data(), 42, 7, row.data(), row.size());
  uint64_t key = 0, seq = 0;
  REQUIRE(DecodeRecord(rec.data(), row.size(), &key, &seq));
  CHECK(key == 42);
  CHECK(seq == 7);
  CHECK(std::memcmp(rec.data() + 16, row.data(), row.size()) == 0);
  for (size_t i = 0; i < rec.size(); i += 5) {
    std::vector<uint8_t> bad = rec;
    bad[i] ^= 1;
    CHECK_FALSE(DecodeRecord(bad.data(), row.size(), &key, &seq));
  }
  CHECK_FALSE(DecodeRecord(std::vector<uint8_t>(44, 0).data(), row.size(), &key, &seq));

  std::vector<uint8_t> header(kHeaderBytes);
  EncodeSegmentHeader(header.data(), RecordLayout::For(24), 12);
  CHECK(CheckSegmentHeader("seg-000012.dat", header.data(), 24, 12).ok());
  const Status wrong_rows = CheckSegmentHeader("seg-000012.dat", header.data(), 32, 12);
  CHECK(wrong_rows.code() == Status::Code::kInvalidArgument);
  CHECK(wrong_rows.message().find("seg-000012.dat") != std::string::npos);
  CHECK(CheckSegmentHeader("x", header.data(), 24, 13).code() == Status::Code::kCorruption);
  header[20] ^= 1;
  CHECK(CheckSegmentHeader("x", header.data(), 24, 12).code() == Status::Code::kCorruption);

  ManifestData m;
  m.row_bytes = 64;
  m.next_file_number = 9;
  m.segments = {{3, 100}, {8, 5}};
  const std::string bytes = EncodeManifest(m);
  CHECK(bytes.size() == 32 + 2 * 16 + 4);
  ManifestData back;
  REQUIRE(DecodeManifest("MANIFEST", bytes, &back).ok());
  CHECK(back.row_bytes == 64);
  CHECK(back.next_file_number == 9);
  CHECK(back.segments == m.segments);
  CHECK(DecodeManifest("MANIFEST", bytes.substr(0, bytes.size() - 1), &back).code() == Status::Code::kCorruption);
  std::string flipped = bytes;
  flipped[40] ^= 1;
  CHECK(DecodeManifest("MANIFEST", flipped, &back).message().find("checksum") != std::string::npos);

  CHECK(SegmentFileName(12) == "seg-000012.dat");
  CHECK(ParseSegmentFileName("seg-000012.dat") == 12);
  CHECK(ParseSegmentFileName("seg-1234567.dat") == 1234567);
  CHECK(ParseSegmentFileName("seg-00x012.dat") == 0);
  CHECK(ParseSegmentFileName("MANIFEST") == 0);
}

TEST_CASE("ssd: record index upserts and grows like a map") {
  RecordIndex index;
  std::unordered_map<uint64_t, uint64_t> model;
  uint64_t x = 1;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t key = (i % 1000 == 0) ? ~0ull : x % 5000;
    uint64_t old = 0;
    const bool had = index.Upsert(key, static_cast<uint64_t>(i), &old);
    CHECK(had == (model.count(key) == 1));
    if (had) CHECK(old == model[key]);
    model[key] = static_cast<uint64_t>(i);
  }
  CHECK(index.size() == model.size());
  for (const auto& [key, want] : model) {
    uint64_t value = 0;
    REQUIRE(index.Find(key, &value));
    CHECK(value == want);
  }
  uint64_t value = 0;
  CHECK_FALSE(index.Find(123456789, &value));
}

}  // namespace strata::ssd
