// libFuzzer target: the Criteo TSV row parser on arbitrary lines (the input split at '\n').
// Every line must parse or be refused with a reason, never crash or read out of bounds,
// and the batch must stay consistent: one more example exactly when the row parsed, with
// its offsets, labels and dense features in step.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "data/criteo_row.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strata::TsvSchema schema;
  strata::Batch batch;
  batch.Clear(schema.num_slots, schema.num_dense);
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  std::string reason;
  for (size_t start = 0; start <= all.size();) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    const int before = batch.num_examples;
    reason.clear();
    const bool parsed = strata::data_internal::ParseCriteoRow(all.substr(start, end - start), schema, &batch, &reason);
    if (parsed != (batch.num_examples == before + 1) || (!parsed && reason.empty())) __builtin_trap();
    const size_t n = static_cast<size_t>(batch.num_examples);
    if (batch.labels.size() != n || batch.dense.size() != n * schema.num_dense ||
        batch.offsets.size() != n * schema.num_slots + 1 || batch.offsets.back() != batch.keys.size()) {
      __builtin_trap();
    }
    start = end + 1;
  }
  return 0;
}
