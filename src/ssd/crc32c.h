// crc32c: the Castagnoli CRC-32 (iSCSI polynomial 0x82F63B78) over a byte range, used by
// every SSD-PS checksum. Uses the SSE4.2 crc32 instruction when the build targets it and a
// byte-wise table otherwise; both give the same values. Pure function, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::ssd {

// Extends `crc` (0 to start) over data[0, n).
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

// crcs[i] = Crc32c(0, data[i], n) for i < count, with the hardware path four ranges at a
// time side by side: the crc32 instruction's latency is three times its issue interval, so
// four independent chains interleaved run about three times as fast as one after another
// (an SSD-PS record's 80 bytes are one short chain).
void Crc32cEach(const uint8_t* const* data, size_t count, size_t n, uint32_t* crcs);

}  // namespace strata::ssd
