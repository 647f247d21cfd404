// Parsing one flag value: numbers (int, int64, uint64, float, double), words, comma-separated
// lists, each checked against the flag's bounds. Every error is an InvalidArgument that
// names the flag and says what is wrong with the text: not a number, not finite (nan, inf),
// out of the type's range (with that bound), or outside the flag's bounds (with the bound).
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/common/interval.h"
#include "strata/common/status.h"

namespace strata {

// *out = the number `text` spells, if it is finite and lies in `bounds`; otherwise *out is
// unchanged. Defined for int, int64_t, uint64_t, float and double.
template <typename T>
Status ParseNumber(std::string_view flag, std::string_view text, const Interval& bounds, T* out);

// *out = the items of a comma-separated list of integers, each in `bounds` ("" is empty).
Status ParseIntList(std::string_view flag, std::string_view text, const Interval& bounds, std::vector<int>* out);

// *index = position of `text` in `words`.
Status ParseWord(std::string_view flag, std::string_view text, const std::vector<std::string>& words, size_t* index);

// Checks a number against a flag's bounds: "`what` must be positive, got `text`",
// "... must be >= 0 ...", "... must be at most 16 ...". `what` is "--flag" or "--flag items".
Status CheckBounds(std::string_view what, std::string_view text, double value, const Interval& bounds,
                   bool integral);

// `bounds` as integers see it: open finite ends made closed ((0, 16] -> [1, 16]).
Interval IntegerBounds(const Interval& bounds);

// The shortest text that parses back to v ("0.05", "1e-06", "1024").
template <typename T>
std::string FormatNumber(T v);

// Items of a comma-separated list; empty items are kept ("a,,b" has three).
std::vector<std::string> SplitList(std::string_view text);

// words joined by `sep`, the last two by `last_sep`: "a", "a or b", "a, b or c".
std::string JoinWords(const std::vector<std::string>& words, std::string_view sep, std::string_view last_sep);

}  // namespace strata
