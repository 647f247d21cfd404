// Batch: a mini-batch of parsed examples in the layout every backend consumes.
// Sparse features are CSR over (example, slot): the keys of example i in slot s are
// keys[offsets[i * num_slots + s] .. offsets[i * num_slots + s + 1]). A slot may hold zero
// keys (an empty Criteo field) or several (multi-valued slots; sum-pooled).
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

struct Batch {
  int num_examples = 0;
  int num_slots = 0;
  int num_dense = 0;
  std::vector<float> labels;      // (num_examples), 0 or 1
  std::vector<float> dense;       // (num_examples, num_dense), already transformed
  std::vector<uint64_t> keys;     // all sparse keys, example-major then slot-major
  std::vector<uint32_t> offsets;  // (num_examples * num_slots + 1), offsets[0] == 0

  void Clear(int slots, int dense_features) {
    num_examples = 0;
    num_slots = slots;
    num_dense = dense_features;
    labels.clear();
    dense.clear();
    keys.clear();
    offsets.assign(1, 0);
  }
};

// Appends examples [first, first + count) of src to dst (same slots and dense width),
// renumbering their key offsets.
void AppendExamples(const Batch& src, int first, int count, Batch* dst);

// Dense feature transform shared by every reader and generator: sign(x) * log(1 + |x|).
float TransformDense(double x);

}  // namespace strata
