// Test helper: the rows of a PulledRows as one array, in the order of the keys the pull
// grouped (its parts are contiguous ranges of those keys, in owner order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/comm/param_exchange.h"

namespace strata::test {

inline std::vector<uint8_t> FlatRows(const PulledRows& pulled, const std::vector<uint64_t>& keys, size_t row_bytes) {
  std::vector<uint8_t> flat;
  pulled.ForEachPart(keys, [&](const uint64_t*, size_t n, const uint8_t* rows) {
    flat.insert(flat.end(), rows, rows + n * row_bytes);
  });
  return flat;
}

// A RowExport from rows (routing.size(), row_bytes) laid out in routing.keys() order.
inline ParamExchange::RowExport ExportFrom(const std::vector<uint64_t>& keys, const std::vector<uint8_t>& rows,
                                           size_t row_bytes) {
  return [&keys, &rows, row_bytes](const uint64_t* want, size_t n, uint8_t* out) {
    for (size_t i = 0; i < n; ++i) {
      const size_t at = static_cast<size_t>(std::find(keys.begin(), keys.end(), want[i]) - keys.begin());
      std::copy(&rows[at * row_bytes], &rows[(at + 1) * row_bytes], out + i * row_bytes);
    }
    return Status::OK();
  };
}

}  // namespace strata::test
