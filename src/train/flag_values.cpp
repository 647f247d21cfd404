// Flag value parsing and the messages that say what is wrong with a value.
#include "flag_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <type_traits>

namespace strata {
namespace {

Status Bad(std::string_view flag, std::string_view text, std::string_view why) {
  return Status::InvalidArgument(fmt::format("--{}: '{}' {}", flag, text, why));
}

enum class Reading { kNotNumber, kNonFinite, kNumber };

// `text` read as a double, to explain why it is not a T. Numbers beyond a double's range
// read as +-inf (overflow) or 0 (underflow); nan and inf spelled out are kNonFinite.
Reading ReadAsDouble(std::string_view text, double* v) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *v);
  if (text.empty() || ptr != end) return Reading::kNotNumber;
  if (ec == std::errc::result_out_of_range) {
    const bool underflow = text.find("e-") != std::string_view::npos || text.find("E-") != std::string_view::npos;
    *v = underflow ? 0.0 : (text.front() == '-' ? -Interval::kInf : Interval::kInf);
    return Reading::kNumber;
  }
  if (ec != std::errc()) return Reading::kNotNumber;
  return std::isfinite(*v) ? Reading::kNumber : Reading::kNonFinite;
}

// Why `text` is not a T in `bounds`, once from_chars refused it.
template <typename T>
Status WhyNot(std::string_view flag, std::string_view text, const Interval& bounds) {
  double d = 0;
  const Reading r = ReadAsDouble(text, &d);
  if (r == Reading::kNotNumber) return Bad(flag, text, "is not a valid number");
  if (r == Reading::kNonFinite) return Bad(flag, text, "is not a finite number");
  using Lim = std::numeric_limits<T>;
  // (max + 1 as a double is exact for every integer type: 2^31, 2^63, 2^64.)
  const bool in_type = d >= double(Lim::lowest()) && d < double(Lim::max()) + 1.0;
  if constexpr (std::is_integral_v<T>) {
    if (in_type && d != std::floor(d)) return Bad(flag, text, "is not an integer");
    if (in_type) return Bad(flag, text, "is not a valid integer (write it in decimal digits)");
  }
  // Out of T's range: the flag's own bound says more, when it excludes the value.
  STRATA_RETURN_IF_ERROR(CheckBounds("--" + std::string(flag), text, d, bounds, std::is_integral_v<T>));
  if (!std::is_integral_v<T> && in_type) return Bad(flag, text, "is out of range (too close to 0)");
  return Bad(flag, text, d < 0 ? fmt::format("is out of range (at least {})", Lim::lowest())
                                : fmt::format("is out of range (at most {})", Lim::max()));
}

}  // namespace

template <typename T>
Status ParseNumber(std::string_view flag, std::string_view text, const Interval& bounds, T* out) {
  T v{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || ec != std::errc()) return WhyNot<T>(flag, text, bounds);
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) return Bad(flag, text, "is not a finite number");
  }
  STRATA_RETURN_IF_ERROR(CheckBounds("--" + std::string(flag), text, double(v), bounds, std::is_integral_v<T>));
  *out = v;
  return Status::OK();
}

template Status ParseNumber<int>(std::string_view, std::string_view, const Interval&, int*);
template Status ParseNumber<int64_t>(std::string_view, std::string_view, const Interval&, int64_t*);
template Status ParseNumber<uint64_t>(std::string_view, std::string_view, const Interval&, uint64_t*);
template Status ParseNumber<float>(std::string_view, std::string_view, const Interval&, float*);
template Status ParseNumber<double>(std::string_view, std::string_view, const Interval&, double*);

Status ParseIntList(std::string_view flag, std::string_view text, const Interval& bounds, std::vector<int>* out) {
  std::vector<int> items;
  for (const std::string& item : SplitList(text)) {
    int v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ptr != item.data() + item.size() || ec != std::errc()) {
      return Bad(flag, text, "is not a comma-separated list of integers");
    }
    STRATA_RETURN_IF_ERROR(CheckBounds(fmt::format("--{} items", flag), item, v, bounds, true));
    items.push_back(v);
  }
  *out = std::move(items);
  return Status::OK();
}

Status ParseWord(std::string_view flag, std::string_view text, const std::vector<std::string>& words, size_t* index) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == text) {
      *index = i;
      return Status::OK();
    }
  }
  return Bad(flag, text, "is not " + JoinWords(words, ", ", " or "));
}

Status CheckBounds(std::string_view what, std::string_view text, double value, const Interval& bounds,
                   bool integral) {
  const Interval b = integral ? IntegerBounds(bounds) : bounds;
  std::string need;
  if (bounds.lo == 0 && bounds.lo_open && !(value > 0)) {
    need = "positive";
  } else if (b.lo != -Interval::kInf && !(b.lo_open ? value > b.lo : value >= b.lo)) {
    need = fmt::format("{} {}", b.lo_open ? ">" : ">=", b.lo);
  } else if (b.hi != Interval::kInf && !(b.hi_open ? value < b.hi : value <= b.hi)) {
    need = fmt::format("{} {}", b.hi_open ? "below" : "at most", b.hi);
  } else {
    return Status::OK();
  }
  return Status::InvalidArgument(fmt::format("{} must be {}, got {}", what, need, text));
}

Interval IntegerBounds(const Interval& bounds) {
  Interval b = bounds;
  if (b.lo != -Interval::kInf && b.lo_open) b = {std::floor(b.lo) + 1, false, b.hi, b.hi_open};
  if (b.hi != Interval::kInf && b.hi_open) b = {b.lo, b.lo_open, std::ceil(b.hi) - 1, false};
  return b;
}

template <typename T>
std::string FormatNumber(T v) {
  return fmt::format("{}", v);
}

template std::string FormatNumber<int>(int);
template std::string FormatNumber<int64_t>(int64_t);
template std::string FormatNumber<uint64_t>(uint64_t);
template std::string FormatNumber<float>(float);
template std::string FormatNumber<double>(double);

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  std::istringstream in{std::string(text)};
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

std::string JoinWords(const std::vector<std::string>& words, std::string_view sep, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? last_sep : sep;
    out += words[i];
  }
  return out;
}

}  // namespace strata
