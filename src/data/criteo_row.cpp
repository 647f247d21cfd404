// Criteo row parsing: label, integers through std::from_chars, tokens through a hex table.
#include "data/criteo_row.h"

#include <charconv>
#include <cstdint>
#include <cstring>

#include "data/dense_table.h"
#include "strata/common/partition.h"

namespace strata {
namespace {

// 0..15 for hex digits, 0xff otherwise.
struct HexTable {
  uint8_t v[256];
  constexpr HexTable() : v() {
    for (int i = 0; i < 256; ++i) v[i] = 0xff;
    for (int i = 0; i < 10; ++i) v['0' + i] = static_cast<uint8_t>(i);
    for (int i = 0; i < 6; ++i) {
      v['a' + i] = static_cast<uint8_t>(10 + i);
      v['A' + i] = static_cast<uint8_t>(10 + i);
    }
  }
};
constexpr HexTable kHex;

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

size_t CountColumns(std::string_view line) {
  size_t n = 1;
  for (char c : line) n += c == '\t' ? 1 : 0;
  return n;
}

}  // namespace

uint64_t CriteoTokenHash(std::string_view token) {
  if (token.size() <= 16) {
    uint64_t v = 0;
    uint8_t bad = 0;
    for (unsigned char c : token) {
      uint8_t d = kHex.v[c];
      bad |= d & 0xf0;
      v = (v << 4) | (d & 0x0f);
    }
    if (bad == 0) return v;
  }
  return Fnv1a64(token);
}

namespace data_internal {

bool ParseCriteoRow(std::string_view line, const TsvSchema& schema, Batch* out, std::string* reason) {
  const size_t expected = static_cast<size_t>(schema.columns());
  const char* p = line.data();
  const char* const end = p + line.size();
  // Splits off the next field; false when the line has run out of fields.
  bool more = true;
  auto next_field = [&](std::string_view* field) {
    if (!more) return false;
    const char* tab = static_cast<const char*>(std::memchr(p, '\t', static_cast<size_t>(end - p)));
    const char* stop = tab != nullptr ? tab : end;
    *field = std::string_view(p, static_cast<size_t>(stop - p));
    more = tab != nullptr;
    p = stop + (tab != nullptr ? 1 : 0);
    return true;
  };
  auto fail_columns = [&] {
    *reason = "expected " + std::to_string(expected) + " columns, got " + std::to_string(CountColumns(line));
    return false;
  };

  std::string_view field;
  next_field(&field);
  float label;
  if (field == "0") {
    label = 0.0f;
  } else if (field == "1") {
    label = 1.0f;
  } else {
    if (CountColumns(line) != expected) return fail_columns();
    *reason = "bad label '" + std::string(field) + "' (must be 0 or 1)";
    return false;
  }

  const size_t dense_mark = out->dense.size();
  const size_t key_mark = out->keys.size();
  const size_t offset_mark = out->offsets.size();
  auto rollback = [&] {
    out->dense.resize(dense_mark);
    out->keys.resize(key_mark);
    out->offsets.resize(offset_mark);
    return false;
  };

  for (int j = 0; j < schema.num_dense; ++j) {
    if (!next_field(&field)) return rollback() || fail_columns();
    int64_t v = 0;
    if (!field.empty()) {
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (ec != std::errc() || ptr != field.data() + field.size()) {
        rollback();
        if (CountColumns(line) != expected) return fail_columns();
        *reason = "integer column I" + std::to_string(j + 1) + " is not a number: '" + std::string(field) + "'";
        return false;
      }
    }
    out->dense.push_back(TransformDenseInt(v));
  }
  for (int s = 0; s < schema.num_slots; ++s) {
    if (!next_field(&field)) return rollback() || fail_columns();
    if (!field.empty()) out->keys.push_back(SlotKey(s, CriteoTokenHash(field)));
    out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
  }
  if (more) return rollback() || fail_columns();
  out->labels.push_back(label);
  ++out->num_examples;
  return true;
}

}  // namespace data_internal
}  // namespace strata
