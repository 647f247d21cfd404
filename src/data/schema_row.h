// Parsing of one delimited text row into a Batch, as an InputSchema says (schema.h), and
// the check of a file's header line against the schema. Pure; allocation-free on the
// success path apart from the batch's own growth; safe from any thread on distinct batches.
#pragma once

#include <string>
#include <string_view>

#include "strata/data/batch.h"
#include "strata/data/schema.h"

namespace strata::data_internal {

// Appends the example held by `line` (no '\n') to *out and returns true; on a malformed
// row leaves *out as it was, sets *reason (naming the column) and returns false.
// REQUIRES: out->num_slots == schema.num_slots(), out->num_dense == schema.num_dense.
bool ParseSchemaRow(std::string_view line, const InputSchema& schema, Batch* out, std::string* reason);

// OK when the header line names the schema's columns, in order; else why not.
Status CheckHeader(std::string_view line, const InputSchema& schema);

}  // namespace strata::data_internal
