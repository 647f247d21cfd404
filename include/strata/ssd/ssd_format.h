// SSD-PS on-disk format: segment files of fixed-size row records and the MANIFEST that
// names the live set. Public so a dump command can read a store directory without the
// store. All integers are little-endian; crc32c is the Castagnoli CRC (iSCSI polynomial).
//
// Directory:  MANIFEST          the live set, replaced atomically (see below)
//             seg-000001.dat    segment files; numbers only grow, never reused
//             MANIFEST.tmp      a manifest being written; ignored and removed at open
//
// Segment file = one 4 KiB header block, then units of records:
//
//   offset 0                                                               4096
//   +-------+---------+-----------+--------------+---------+--------+-------+-----+------+
//   | magic | version | row_bytes | record_bytes | per_unit| unit_b | file# | crc | zero |
//   |  u64  |   u32   |    u32    |     u32      |   u32   |  u32   |  u64  | u32 | pad  |
//   +-------+---------+-----------+--------------+---------+--------+-------+-----+------+
//   magic = "STRATSEG"; crc covers the 36 bytes before it.
//
//   unit (unit_bytes = 4096, or record_bytes rounded up to 4096 for rows over 4 KiB):
//   +----------+----------+-- ... --+----------+------------+
//   | record 0 | record 1 |         | record k | zero pad   |   k+1 = per_unit records
//   +----------+----------+-- ... --+----------+------------+
//
//   record (record_bytes = 20 + row_bytes):
//   +---------+---------+----------------------+----------+
//   | key u64 | seq u64 | row (row_bytes)      | crc32c   |   crc covers key, seq and row
//   +---------+---------+----------------------+----------+
//
// A record never straddles a unit, so one aligned unit read returns it whole (what O_DIRECT
// needs). seq is the store-wide write sequence: among all records of a key in the live set
// the highest seq is the current value; compaction copies keep their seq, so the order of
// files does not matter. Record i sits at 4096 + (i / per_unit) * unit_bytes +
// (i % per_unit) * record_bytes.
//
// MANIFEST:
//   +-------+---------+-----------+------------+-------+-----+------------------+-------+
//   | magic | version | row_bytes | next_file# | count | pad | count x entry    | crc32c|
//   |  u64  |   u32   |    u32    |    u64     |  u32  | u32 | (file# u64,      |  u32  |
//   |       |         |           |            |       |     |  records u64)    |       |
//   +-------+---------+-----------+------------+-------+-----+------------------+-------+
//   magic = "STRATAMF"; crc covers everything before it; the file is exactly
//   32 + 16 * count + 4 bytes.
//
// Commit protocol: segment data is fdatasync'ed first; then MANIFEST.tmp is written,
// fsync'ed, renamed over MANIFEST and the directory fsync'ed. `records` is the number of
// records of that segment that were durable at the commit; a reader uses records [0,
// records) and ignores whatever follows them (a torn or unsynced tail is never data).
// Files not listed in MANIFEST are leftovers of an interrupted write or compaction and are
// deleted at open. A checksum mismatch inside the listed range is Corruption.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/common/status.h"

namespace strata::ssd {

inline constexpr uint64_t kSegmentMagic = 0x4745535441525453ull;   // "STRATSEG"
inline constexpr uint64_t kManifestMagic = 0x464D415441525453ull;  // "STRATAMF"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kBlockBytes = 4096;
inline constexpr size_t kHeaderBytes = kBlockBytes;
inline constexpr size_t kRecordRowOffset = 16;  // key + seq precede the row in a record
inline constexpr size_t kRecordOverhead = kRecordRowOffset + 4;  // key + seq + crc
inline constexpr char kManifestName[] = "MANIFEST";
inline constexpr char kManifestTmpName[] = "MANIFEST.tmp";

// Where records sit in a segment for one row size.
struct RecordLayout {
  size_t row_bytes = 0;
  size_t record_bytes = 0;
  size_t unit_bytes = 0;
  size_t per_unit = 0;

  static RecordLayout For(size_t row_bytes);
  uint64_t Offset(uint64_t record) const {
    return kHeaderBytes + (record / per_unit) * unit_bytes + (record % per_unit) * record_bytes;
  }
  // File bytes that hold records [0, n): the header plus every unit they touch.
  uint64_t ExtentBytes(uint64_t n) const {
    return kHeaderBytes + (n + per_unit - 1) / per_unit * unit_bytes;
  }
  // The most records whose extent fits in `bytes` (a segment's).
  uint64_t RecordsWithin(uint64_t bytes) const { return (bytes - kHeaderBytes) / unit_bytes * per_unit; }
};

// "seg-000012.dat"; returns 0 from ParseSegmentFileName when `name` is not one.
std::string SegmentFileName(uint64_t number);
uint64_t ParseSegmentFileName(const std::string& name);

// dst: (record_bytes) ; row: (row_bytes).
void EncodeRecord(uint8_t* dst, uint64_t key, uint64_t seq, const uint8_t* row, size_t row_bytes);
// EncodeRecord(dst[i], keys[i], first_seq + i, rows + i * row_bytes, row_bytes) for i <
// count, the checksums computed side by side (Crc32cEach). REQUIRES: count <= kMaxRecordsAtOnce.
inline constexpr size_t kMaxRecordsAtOnce = 16;
void EncodeRecords(uint8_t* const* dst, const uint64_t* keys, uint64_t first_seq, const uint8_t* rows, size_t count,
                   size_t row_bytes);
// True when the checksum matches; then *key and *seq are set and the row is at
// src + kRecordRowOffset.
bool DecodeRecord(const uint8_t* src, size_t row_bytes, uint64_t* key, uint64_t* seq);
// DecodeRecord of src[i] into keys[i], seqs[i] for i < count, the checksums computed side
// by side; returns the first i whose checksum does not match (count when all do: a
// damaged record's key and seq, and those after it, are not set). REQUIRES: count <=
// kMaxRecordsAtOnce.
size_t DecodeRecords(const uint8_t* const* src, size_t count, size_t row_bytes, uint64_t* keys, uint64_t* seqs);

// dst: (kHeaderBytes), fully written.
void EncodeSegmentHeader(uint8_t* dst, const RecordLayout& layout, uint64_t file_number);
// Checks magic, version, checksum and that the row size is `row_bytes`; `path` names the
// file in the message.
Status CheckSegmentHeader(const std::string& path, const uint8_t* src, size_t row_bytes,
                          uint64_t file_number);

struct ManifestData {
  uint32_t row_bytes = 0;
  uint64_t next_file_number = 1;
  std::vector<std::pair<uint64_t, uint64_t>> segments;  // (file number, durable records)
};

std::string EncodeManifest(const ManifestData& m);
Status DecodeManifest(const std::string& path, const std::string& bytes, ManifestData* m);

}  // namespace strata::ssd
