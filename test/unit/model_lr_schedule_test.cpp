// LrSchedule: warm-up, the three decays and the hold at the end rate, against values
// computed by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <numbers>

#include "strata/model/lr_schedule.h"

namespace strata {

TEST_CASE("lr schedule: constant by default, linear warm-up from 1/N") {
  LrSchedule s;
  CHECK(s.Factor(0) == 1.0);
  CHECK(s.Factor(123456) == 1.0);
  s.warmup_steps = 4;
  CHECK(s.Factor(0) == 0.25);
  CHECK(s.Factor(2) == 0.75);
  CHECK(s.Factor(3) == 1.0);
  CHECK(s.Factor(100) == 1.0);
}

TEST_CASE("lr schedule: linear, cosine and polynomial decays end at end_lr and hold") {
  LrSchedule s;
  s.decay_start = 10;
  s.decay_steps = 20;
  s.end_lr = 0.1;
  for (LrDecay d : {LrDecay::kLinear, LrDecay::kCosine, LrDecay::kPolynomial}) {
    s.decay = d;
    CAPTURE(static_cast<int>(d));
    CHECK(s.Factor(9) == 1.0);    // before the decay
    CHECK(s.Factor(10) == 1.0);   // its first step: no progress yet
    CHECK(s.Factor(30) == doctest::Approx(0.1));
    CHECK(s.Factor(1000) == doctest::Approx(0.1));
  }
  s.decay = LrDecay::kLinear;
  CHECK(s.Factor(20) == doctest::Approx(0.1 + 0.9 * 0.5));
  s.decay = LrDecay::kCosine;
  CHECK(s.Factor(15) == doctest::Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * 0.25))));
  s.decay = LrDecay::kPolynomial;
  s.decay_power = 3;
  CHECK(s.Factor(20) == doctest::Approx(0.1 + 0.9 * 0.125));
}

TEST_CASE("lr schedule: warm-up and decay multiply") {
  LrSchedule s;
  s.warmup_steps = 10;
  s.decay = LrDecay::kLinear;
  s.decay_start = 0;
  s.decay_steps = 10;
  CHECK(s.Factor(4) == doctest::Approx(0.5 * 0.6));
}

}  // namespace strata
