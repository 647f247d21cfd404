// GroundTruth: the hidden click model of the synthetic data set (see synthetic.h). Every
// parameter is a pure hash of (seed, slot, token), computed on demand, so the model costs
// O(slots) memory whatever the cardinality. Immutable after construction except for the
// calibrated bias; const methods are thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/data/synthetic.h"

namespace strata::data_internal {

// One generated example before formatting. rank 0 = empty field.
struct SyntheticRow {
  std::vector<uint64_t> ranks;     // (num_slots) Zipf ranks in [1, cardinality], or 0
  std::vector<int64_t> ints;       // (num_dense) integer features
  std::vector<uint8_t> int_empty;  // (num_dense) 1 when the integer field is left empty
};

class GroundTruth {
 public:
  explicit GroundTruth(const SyntheticOptions& options);

  // The token written for a rank: a bijection of [1, cardinality] per slot.
  uint64_t Token(int slot, uint64_t rank) const;
  int token_digits() const { return token_digits_; }

  // Integer feature j from a uniform u in (0, 1]: heavy-tailed counts around its own scale.
  int64_t DenseValue(int j, double u) const;

  // bias + main effects + interactions + dense term. An empty token contributes nothing;
  // an empty integer counts as 0, as the reader reads it.
  double Logit(const SyntheticRow& row) const;
  void set_bias(double bias) { bias_ = bias; }

 private:
  double Decay(uint64_t rank) const;

  SyntheticOptions options_;
  int token_digits_;
  std::vector<uint64_t> slot_salt_;  // (num_slots)
  std::vector<double> slot_amp_;     // (num_slots) main-effect scale
  std::vector<int> pair_a_, pair_b_; // interacting slot pairs
  double pair_amp_ = 0;
  std::vector<double> dense_scale_;  // (num_dense) median of each integer feature
  std::vector<double> dense_coef_;   // (num_dense)
  double bias_ = 0;
};

}  // namespace strata::data_internal
