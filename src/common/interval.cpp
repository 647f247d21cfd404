// Interval formatting: shortest decimal forms of the ends ("16", "0.5", "1e-06").
#include "strata/common/interval.h"

#include <fmt/format.h>

namespace strata {

std::string Interval::ToString() const {
  const bool has_lo = lo != -kInf, has_hi = hi != kInf;
  if (has_lo && has_hi) return fmt::format("{}{}, {}{}", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
  if (has_lo) return fmt::format("{} {}", lo_open ? ">" : ">=", lo);
  if (has_hi) return fmt::format("{} {}", hi_open ? "<" : "<=", hi);
  return "";
}

}  // namespace strata
