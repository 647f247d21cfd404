// LrSchedule::Factor: warm-up times decay, in double.
#include "strata/model/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace strata {

double LrSchedule::Factor(int64_t step) const {
  double factor = 1.0;
  if (step < warmup_steps) factor = static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  if (decay == LrDecay::kNone || step < decay_start) return factor;
  const double progress =
      std::min(1.0, static_cast<double>(step - decay_start) / static_cast<double>(std::max<int64_t>(1, decay_steps)));
  double remaining = 1.0 - progress;  // linear
  if (decay == LrDecay::kCosine) remaining = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  if (decay == LrDecay::kPolynomial) remaining = std::pow(1.0 - progress, decay_power);
  return factor * (end_lr + (1.0 - end_lr) * remaining);
}

}  // namespace strata
