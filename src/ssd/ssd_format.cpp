// Encoding and checking of SSD-PS segment headers, records and manifests (format drawn in
// strata/ssd/ssd_format.h).
#include "strata/ssd/ssd_format.h"

#include <cassert>
#include <cstdio>
#include <cstring>

#include "ssd/crc32c.h"

namespace strata::ssd {
namespace {

template <typename T>
void Store(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }
template <typename T>
T Load(const uint8_t* p) { T v; std::memcpy(&v, p, sizeof(T)); return v; }

constexpr size_t kSegmentHeaderCrcAt = 36;
constexpr size_t kManifestFixedBytes = 32;
constexpr size_t kManifestEntryBytes = 16;

}  // namespace

RecordLayout RecordLayout::For(size_t row_bytes) {
  RecordLayout l;
  l.row_bytes = row_bytes;
  l.record_bytes = row_bytes + kRecordOverhead;
  l.unit_bytes = (l.record_bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  l.per_unit = l.unit_bytes / l.record_bytes;
  return l;
}

std::string SegmentFileName(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "seg-%06llu.dat", static_cast<unsigned long long>(number));
  return buf;
}

uint64_t ParseSegmentFileName(const std::string& name) {
  if (name.size() < 9 || name.compare(0, 4, "seg-") != 0 ||
      name.compare(name.size() - 4, 4, ".dat") != 0) {
    return 0;
  }
  uint64_t n = 0;
  for (size_t i = 4; i + 4 < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return n;
}

void EncodeRecord(uint8_t* dst, uint64_t key, uint64_t seq, const uint8_t* row, size_t row_bytes) {
  EncodeRecords(&dst, &key, seq, row, 1, row_bytes);
}

void EncodeRecords(uint8_t* const* dst, const uint64_t* keys, uint64_t first_seq, const uint8_t* rows, size_t count,
                   size_t row_bytes) {
  assert(count <= kMaxRecordsAtOnce);
  for (size_t i = 0; i < count; ++i) {
    Store(dst[i], keys[i]);
    Store(dst[i] + 8, first_seq + i);
    std::memcpy(dst[i] + kRecordRowOffset, rows + i * row_bytes, row_bytes);
  }
  uint32_t crcs[kMaxRecordsAtOnce];
  Crc32cEach(dst, count, kRecordRowOffset + row_bytes, crcs);
  for (size_t i = 0; i < count; ++i) Store(dst[i] + kRecordRowOffset + row_bytes, crcs[i]);
}

bool DecodeRecord(const uint8_t* src, size_t row_bytes, uint64_t* key, uint64_t* seq) {
  return DecodeRecords(&src, 1, row_bytes, key, seq) == 1;
}

size_t DecodeRecords(const uint8_t* const* src, size_t count, size_t row_bytes, uint64_t* keys, uint64_t* seqs) {
  assert(count <= kMaxRecordsAtOnce);
  const size_t covered = kRecordRowOffset + row_bytes;
  uint32_t crcs[kMaxRecordsAtOnce];
  Crc32cEach(src, count, covered, crcs);
  for (size_t i = 0; i < count; ++i) {
    if (crcs[i] != Load<uint32_t>(src[i] + covered)) return i;
    keys[i] = Load<uint64_t>(src[i]);
    seqs[i] = Load<uint64_t>(src[i] + 8);
  }
  return count;
}

void EncodeSegmentHeader(uint8_t* dst, const RecordLayout& layout, uint64_t file_number) {
  std::memset(dst, 0, kHeaderBytes);
  Store(dst, kSegmentMagic);
  Store(dst + 8, kFormatVersion);
  Store(dst + 12, static_cast<uint32_t>(layout.row_bytes));
  Store(dst + 16, static_cast<uint32_t>(layout.record_bytes));
  Store(dst + 20, static_cast<uint32_t>(layout.per_unit));
  Store(dst + 24, static_cast<uint32_t>(layout.unit_bytes));
  Store(dst + 28, file_number);
  Store(dst + kSegmentHeaderCrcAt, Crc32c(0, dst, kSegmentHeaderCrcAt));
}

Status CheckSegmentHeader(const std::string& path, const uint8_t* src, size_t row_bytes,
                          uint64_t file_number) {
  if (Load<uint64_t>(src) != kSegmentMagic) {
    return Status::Corruption(path + ": not an SSD-PS segment (bad magic)");
  }
  if (Crc32c(0, src, kSegmentHeaderCrcAt) != Load<uint32_t>(src + kSegmentHeaderCrcAt)) {
    return Status::Corruption(path + ": segment header checksum mismatch");
  }
  if (Load<uint32_t>(src + 8) != kFormatVersion) {
    return Status::Corruption(path + ": unsupported segment format version " +
                              std::to_string(Load<uint32_t>(src + 8)));
  }
  const RecordLayout want = RecordLayout::For(row_bytes);
  if (Load<uint32_t>(src + 12) != row_bytes || Load<uint32_t>(src + 16) != want.record_bytes ||
      Load<uint32_t>(src + 20) != want.per_unit || Load<uint32_t>(src + 24) != want.unit_bytes) {
    return Status::InvalidArgument(path + ": segment holds rows of " +
                                   std::to_string(Load<uint32_t>(src + 12)) +
                                   " bytes, store opened with row_bytes " + std::to_string(row_bytes));
  }
  if (Load<uint64_t>(src + 28) != file_number) {
    return Status::Corruption(path + ": header names file number " +
                              std::to_string(Load<uint64_t>(src + 28)));
  }
  return Status::OK();
}

std::string EncodeManifest(const ManifestData& m) {
  std::string out(kManifestFixedBytes + kManifestEntryBytes * m.segments.size() + 4, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  Store(p, kManifestMagic);
  Store(p + 8, kFormatVersion);
  Store(p + 12, m.row_bytes);
  Store(p + 16, m.next_file_number);
  Store(p + 24, static_cast<uint32_t>(m.segments.size()));
  uint8_t* e = p + kManifestFixedBytes;
  for (const auto& [number, records] : m.segments) {
    Store(e, number);
    Store(e + 8, records);
    e += kManifestEntryBytes;
  }
  Store(e, Crc32c(0, p, static_cast<size_t>(e - p)));
  return out;
}

Status DecodeManifest(const std::string& path, const std::string& bytes, ManifestData* m) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < kManifestFixedBytes + 4) {
    return Status::Corruption(path + ": truncated manifest (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (Load<uint64_t>(p) != kManifestMagic) return Status::Corruption(path + ": bad manifest magic");
  const uint32_t count = Load<uint32_t>(p + 24);
  const size_t want = kManifestFixedBytes + kManifestEntryBytes * size_t{count} + 4;
  if (bytes.size() != want) {
    return Status::Corruption(path + ": manifest is " + std::to_string(bytes.size()) +
                              " bytes, its header implies " + std::to_string(want));
  }
  if (Crc32c(0, p, want - 4) != Load<uint32_t>(p + want - 4)) {
    return Status::Corruption(path + ": manifest checksum mismatch");
  }
  if (Load<uint32_t>(p + 8) != kFormatVersion) {
    return Status::Corruption(path + ": unsupported manifest version " + std::to_string(Load<uint32_t>(p + 8)));
  }
  m->row_bytes = Load<uint32_t>(p + 12);
  m->next_file_number = Load<uint64_t>(p + 16);
  m->segments.clear();
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = p + kManifestFixedBytes + kManifestEntryBytes * i;
    m->segments.emplace_back(Load<uint64_t>(e), Load<uint64_t>(e + 8));
  }
  return Status::OK();
}

}  // namespace strata::ssd
