// How a row parser quotes a bad field in an error message: whole up to 64 bytes, else its
// start and its length (a multi-megabyte field must not be echoed into the log). Pure.
#pragma once

#include <string>
#include <string_view>

namespace strata::data_internal {

inline std::string Quoted(std::string_view field) {
  constexpr size_t kShown = 64;
  std::string quoted = "'";
  quoted.append(field.substr(0, kShown));
  quoted.append(field.size() <= kShown ? "'" : "...' (" + std::to_string(field.size()) + " bytes)");
  return quoted;
}

}  // namespace strata::data_internal
