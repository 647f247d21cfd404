// GroundTruth: the hidden click model of the synthetic data set (see synthetic.h). Every
// parameter is a pure hash of (seed, slot, token), computed on demand, so the model costs
// O(slots) memory whatever the cardinality. Calibrate() fixes the scale of each part of the
// logit and the bias from a sample of rows; after that the object is immutable and its
// const methods are thread-safe.
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

// The logit's three parts before scaling: per-slot token effects, pairwise interactions
// and the dense-feature term.
struct LogitParts {
  double main = 0;
  double pair = 0;
  double dense = 0;
};

class GroundTruth {
 public:
  explicit GroundTruth(const SyntheticOptions& options);

  // The token written for a rank: a bijection of [1, cardinality] per slot.
  uint64_t Token(int slot, uint64_t rank) const;
  int token_digits() const { return token_digits_; }

  // Integer feature j from a uniform u in (0, 1]: heavy-tailed counts around its own scale.
  int64_t DenseValue(int j, double u) const;

  // An empty token contributes nothing; an empty integer counts as 0, as the reader reads it.
  LogitParts Parts(const SyntheticRow& row) const;

  // Scales each part of `sample` (parts of representative rows) to its target standard
  // deviation, then sets the bias so the mean click probability is `ctr` (bisection).
  void Calibrate(const std::vector<LogitParts>& sample, double ctr);

  // bias + the scaled parts. REQUIRES: Calibrate() was called.
  double Logit(const SyntheticRow& row) const;

 private:
  SyntheticOptions options_;
  int token_digits_;
  std::vector<uint64_t> slot_salt_;   // (num_slots)
  std::vector<double> slot_weight_;   // (num_slots) relative importance of each slot
  std::vector<int> pair_a_, pair_b_;  // interacting slot pairs
  std::vector<double> dense_scale_;   // (num_dense) median of each integer feature
  std::vector<double> dense_coef_;    // (num_dense) relative weight of each feature
  double main_scale_ = 0, pair_scale_ = 0, dense_scale_factor_ = 0, bias_ = 0;
};

}  // namespace strata::data_internal
