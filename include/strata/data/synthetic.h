// Synthetic Criteo-format data with a known answer (strata-datagen's engine).
// Each categorical slot draws token ranks from its own Zipf distribution over
// `cardinality` tokens (rejection-inversion sampling, O(1) memory, so billions of distinct
// tokens cost nothing up front); a rank maps bijectively to a random-looking hex token (8
// digits up to 2^32 tokens, 16 beyond). Labels come from a hidden ground-truth model:
//   logit = bias + sum_s w_s(token_s) + sum_pairs <u_a(token_a), u_b(token_b)> + dense term
// where every weight is a pure hash of (seed, slot, token) scaled to fade over the Zipf tail
// (so most signal sits on tokens a model sees often), the pair terms are low-rank
// interactions between a few hidden slot pairs, and the bias is calibrated to `ctr`.
// click ~ Bernoulli(sigmoid(logit)). The oracle AUC is the exact AUC of those true
// probabilities against the drawn eval labels: the best any model can reach.
// Output is a pure function of the options: same options, same bytes.
// Thread-compatible: GenerateSynthetic keeps no shared state.
#pragma once

#include <cstdint>
#include <string>

#include "strata/common/status.h"

namespace strata {

struct SyntheticOptions {
  uint64_t train_rows = 400000;
  uint64_t eval_rows = 100000;
  int num_slots = 26;             // Criteo's shape
  int num_dense = 13;
  // Moderate defaults so one epoch over 400k rows learns most of the signal; raise
  // cardinality (up to 2^52) for models larger than memory.
  uint64_t cardinality = 10000;   // tokens per slot
  double zipf = 1.2;              // exponent s of P(rank k) ~ k^-s
  double empty_rate = 0.05;       // chance that any one feature field is left empty
  double ctr = 0.25;              // target mean click probability (Criteo's is about 0.26)
  uint64_t seed = 1;

  // Checks ranges; the message names the matching strata-datagen flag ("--zipf must be > 0").
  Status Validate() const;
};

struct SyntheticSummary {
  double oracle_auc = 0;  // exact AUC of the true probabilities on the eval split
  uint64_t train_rows = 0;
  uint64_t eval_rows = 0;
  double train_ctr = 0;   // fraction of drawn labels that are 1
  double eval_ctr = 0;
};

// Writes out_dir/train.tsv, out_dir/eval.tsv (Criteo TSV: label, num_dense integers,
// num_slots hex tokens, '\t'-separated, '\n'-terminated) and out_dir/oracle.json
// ({"oracle_auc":..,"eval_rows":..,"train_rows":..,"seed":..,...}, floats with 17
// significant digits), creating out_dir if needed. The eval split is drawn from its own
// stream, so it does not depend on train_rows. Errors: invalid options, or a file that
// cannot be created or written (the message names it).
Status GenerateSynthetic(const SyntheticOptions& options, const std::string& out_dir,
                         SyntheticSummary* summary);

}  // namespace strata
