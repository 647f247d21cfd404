// Criteo row parsing: label, integers through std::from_chars, tokens through a hex table.
#include "data/criteo_row.h"

#include <charconv>
#include <cstdint>
#include <cstring>

#include "data/dense_table.h"
#include "data/field_quote.h"
#include "data/label_field.h"
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
namespace {

// Splits a line into its tab-separated fields, front to back.
class FieldCursor {
 public:
  explicit FieldCursor(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  // The next field; false when the line has run out of fields.
  bool Next(std::string_view* field) {
    if (!more_) return false;
    const char* tab = static_cast<const char*>(std::memchr(p_, '\t', static_cast<size_t>(end_ - p_)));
    const char* stop = tab != nullptr ? tab : end_;
    *field = std::string_view(p_, static_cast<size_t>(stop - p_));
    more_ = tab != nullptr;
    p_ = stop + (tab != nullptr ? 1 : 0);
    return true;
  }
  bool more() const { return more_; }

 private:
  const char* p_;
  const char* const end_;
  bool more_ = true;
};

// What a row appended to a batch, taken back when the row turns out malformed.
struct BatchMark {
  explicit BatchMark(const Batch& b) : dense(b.dense.size()), keys(b.keys.size()), offsets(b.offsets.size()) {}
  void Rollback(Batch* b) const {
    b->dense.resize(dense);
    b->keys.resize(keys);
    b->offsets.resize(offsets);
  }
  size_t dense, keys, offsets;
};

// Why a row failed: a wrong column count explains everything, so it is checked first.
bool Fail(std::string_view line, const TsvSchema& schema, const std::string& why, std::string* reason) {
  const size_t expected = static_cast<size_t>(schema.columns());
  const size_t got = CountColumns(line);
  *reason = got != expected ? "expected " + std::to_string(expected) + " columns, got " + std::to_string(got) : why;
  return false;
}

// The integer columns, transformed; on a bad one, *bad names it (empty: out of fields).
bool ParseDense(FieldCursor* fields, const TsvSchema& schema, Batch* out, std::string* bad) {
  std::string_view field;
  for (int j = 0; j < schema.num_dense; ++j) {
    if (!fields->Next(&field)) return false;
    int64_t v = 0;
    if (!field.empty()) {
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (ec != std::errc() || ptr != field.data() + field.size()) {
        *bad = "integer column I" + std::to_string(j + 1) + " is not a number: " + Quoted(field);
        return false;
      }
    }
    out->dense.push_back(TransformDenseInt(v));
  }
  return true;
}

// The categorical columns as slot keys; false when the line has too few or too many.
bool ParseSlots(FieldCursor* fields, const TsvSchema& schema, Batch* out) {
  std::string_view field;
  for (int s = 0; s < schema.num_slots; ++s) {
    if (!fields->Next(&field)) return false;
    if (!field.empty()) out->keys.push_back(SlotKey(s, CriteoTokenHash(field)));
    out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
  }
  return !fields->more();
}

}  // namespace

bool ParseCriteoRow(std::string_view line, const TsvSchema& schema, Batch* out, std::string* reason) {
  FieldCursor fields(line);
  std::string_view field;
  fields.Next(&field);
  float label = 0;
  if (!ParseLabel(field, &label)) return Fail(line, schema, "bad label " + Quoted(field) + " (must be 0 or 1)", reason);
  const BatchMark mark(*out);
  std::string bad;
  if (!ParseDense(&fields, schema, out, &bad) || !ParseSlots(&fields, schema, out)) {
    mark.Rollback(out);
    return Fail(line, schema, bad, reason);
  }
  out->labels.push_back(label);
  ++out->num_examples;
  return true;
}

}  // namespace data_internal
}  // namespace strata
