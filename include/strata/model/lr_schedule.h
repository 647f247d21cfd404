// LrSchedule: the learning-rate schedule of both base rates (--lr-dense, --lr-sparse), by
// global step: a linear warm-up over the first warmup_steps steps, then from decay_start on
// a decay over decay_steps steps to end_lr (a fraction of each base rate), linear, cosine or
// polynomial (1 - progress)^decay_power, held at end_lr afterwards. The flags follow
// HugeCTR's solver (warmup_steps, decay_start, decay_steps, decay_power, end_lr), except that
// end_lr is relative, since there are two base rates. The factor is a pure function of the
// global step, the same on every rank and topology, and a resumed run continues it exactly.
#pragma once

#include <cstdint>

namespace strata {

enum class LrDecay { kNone, kLinear, kCosine, kPolynomial };

struct LrSchedule {
  int64_t warmup_steps = 0;   // 0: no warm-up
  LrDecay decay = LrDecay::kNone;
  int64_t decay_start = 0;    // the global step the decay begins at
  int64_t decay_steps = 1;    // steps from the base rate to end_lr
  double decay_power = 2.0;   // polynomial decay's exponent
  double end_lr = 0.0;        // the rate the decay ends at, as a fraction of the base rate

  // The multiplier of the base rates at global step `step` (0 for the first step).
  double Factor(int64_t step) const;

  bool operator==(const LrSchedule&) const = default;
};

}  // namespace strata
