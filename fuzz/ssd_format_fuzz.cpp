// libFuzzer target: the SSD-PS on-disk decoders (manifest, segment header, record) on
// arbitrary bytes. Each must accept or refuse, never crash or read past the bytes given; a
// manifest that decodes must encode back to a manifest that decodes the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/ssd/ssd_format.h"

namespace {

constexpr size_t kRowBytes = 72;

bool SameManifest(const strata::ssd::ManifestData& a, const strata::ssd::ManifestData& b) {
  return a.row_bytes == b.row_bytes && a.next_file_number == b.next_file_number && a.segments == b.segments;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::ssd;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ManifestData m;
  if (DecodeManifest("fuzz", bytes, &m).ok()) {
    ManifestData again;
    if (!DecodeManifest("fuzz", EncodeManifest(m), &again).ok() || !SameManifest(m, again)) __builtin_trap();
  }
  // The decoders below read fixed sizes: give them exactly that many bytes (copies, so
  // ASan sees any read past them).
  if (size >= kHeaderBytes) {
    const std::vector<uint8_t> header(data, data + kHeaderBytes);
    (void)CheckSegmentHeader("fuzz", header.data(), kRowBytes, 1);
  }
  const size_t record = RecordLayout::For(kRowBytes).record_bytes;
  if (size >= record) {
    const std::vector<uint8_t> rec(data + size - record, data + size);
    uint64_t key = 0, seq = 0;
    (void)DecodeRecord(rec.data(), kRowBytes, &key, &seq);
  }
  return 0;
}
