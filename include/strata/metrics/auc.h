// Evaluation metrics over a whole eval set: exact ROC AUC and mean log loss.
//
// Both are deterministic functions of the multiset of (score, label) pairs: the AUC sorts
// by score and credits ties exactly (integer arithmetic until the final division), and the
// log loss sums in double in index order. Callers that want a topology-independent value
// gather all scores (in a fixed global order for LogLoss) before calling.
//
// Thread safety: pure functions over caller-owned buffers.
#pragma once

#include <cstddef>

namespace strata {

// Area under the ROC curve of scores (n) against labels (n; > 0.5 counts as positive):
// the probability that a random positive scores above a random negative, ties counting
// one half. Returns NaN when n == 0 or either class is absent (the AUC is undefined then;
// JsonRecord writes NaN as null). REQUIRES: no score is NaN. O(n log n), allocates n pairs.
double ExactAuc(const float* scores, const float* labels, size_t n);

// Mean of -[y log p + (1-y) log(1-p)] over probs (n) and labels (n) with p clipped to
// [1e-7, 1 - 1e-7], computed in double and summed in index order. Returns NaN when n == 0.
double LogLoss(const float* probs, const float* labels, size_t n);

}  // namespace strata
