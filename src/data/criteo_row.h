// Parsing of one Criteo TSV row into a Batch. Pure, allocation-free on the success path;
// safe from any thread on distinct batches.
#pragma once

#include <string>
#include <string_view>

#include "strata/data/batch.h"
#include "strata/data/chunk_reader.h"

namespace strata::data_internal {

// Appends the example held by `line` (no '\n') to *out and returns true; on a malformed
// row leaves *out as it was, sets *reason (e.g. "expected 40 columns, got 39") and
// returns false. REQUIRES: out->num_slots == schema.num_slots, out->num_dense ==
// schema.num_dense, out->offsets non-empty.
bool ParseCriteoRow(std::string_view line, const TsvSchema& schema, Batch* out, std::string* reason);

}  // namespace strata::data_internal
