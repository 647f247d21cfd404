// How a row parser reads a click label: 0 or 1, also as a decimal whose fraction is zeros
// ("1.0", "0.00"), as data frames export an integer column that held a missing value. Any
// other text (2, 0.5, yes, empty) is no label. Pure.
#pragma once

#include <string_view>

namespace strata::data_internal {

inline bool ParseLabel(std::string_view field, float* label) {
  if (field.empty() || (field[0] != '0' && field[0] != '1')) return false;
  if (field.size() > 1 && (field[1] != '.' || field.find_first_not_of('0', 2) != std::string_view::npos)) return false;
  *label = field[0] == '1' ? 1.0f : 0.0f;
  return true;
}

}  // namespace strata::data_internal
