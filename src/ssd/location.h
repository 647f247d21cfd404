// Location: where an SSD-PS record lives, packed into 32 bits so the DRAM index stores it
// in 4 bytes: a segment-table slot in the high bits and the record number inside the
// segment in the low `record_bits`. The store picks record_bits at open from the most
// records a segment can hold, so slots get the rest: with 64 MiB segments of 64-byte rows
// (20 record bits) 4096 slots, 256 GiB of segments per store.
//
// Thread safety: a value type; immutable after construction.
#pragma once

#include <cstdint>

namespace strata::ssd {

class LocationCodec {
 public:
  LocationCodec() = default;
  // Room for record numbers [0, max_records).
  explicit LocationCodec(uint64_t max_records) {
    while (record_bits_ < 31 && (uint64_t{1} << record_bits_) < max_records) ++record_bits_;
  }

  uint32_t Make(uint32_t slot, uint64_t record) const {
    return (slot << record_bits_) | static_cast<uint32_t>(record);
  }
  uint32_t Slot(uint32_t loc) const { return loc >> record_bits_; }
  uint64_t Record(uint32_t loc) const { return loc & ((uint32_t{1} << record_bits_) - 1); }
  // Segment-table slots a location can name.
  uint32_t max_slots() const { return uint32_t{1} << (32 - record_bits_); }
  int record_bits() const { return record_bits_; }

 private:
  int record_bits_ = 1;
};

}  // namespace strata::ssd
