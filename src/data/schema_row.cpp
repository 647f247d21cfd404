// Schema rows: field splitting (with double-quoted fields), then one step per column role.
#include "data/schema_row.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "data/field_quote.h"
#include "data/label_field.h"
#include "strata/common/partition.h"
#include "strata/data/chunk_reader.h"

namespace strata::data_internal {
namespace {

// Splits a line at the delimiter, front to back. A field that starts with '"' runs to the
// next '"' followed by the delimiter or the end, and comes back without its quotes.
class Fields {
 public:
  Fields(std::string_view line, char delimiter) : rest_(line), delimiter_(delimiter) {}

  bool Next(std::string_view* field) {
    if (done_) return false;
    size_t end;
    if (!rest_.empty() && rest_.front() == '"') {
      size_t close = 1;
      while ((close = rest_.find('"', close)) != std::string_view::npos && close + 1 < rest_.size() &&
             rest_[close + 1] != delimiter_) {
        ++close;
      }
      if (close != std::string_view::npos) {
        *field = rest_.substr(1, close - 1);
        end = close + 1;
        return Advance(end);
      }
    }
    end = rest_.find(delimiter_);
    *field = rest_.substr(0, end);
    return Advance(end);
  }
  bool more() const { return !done_; }

 private:
  bool Advance(size_t end) {
    if (end >= rest_.size()) {
      done_ = true;
    } else {
      rest_.remove_prefix(end + 1);
    }
    return true;
  }

  std::string_view rest_;
  const char delimiter_;
  bool done_ = false;
};

size_t CountFields(std::string_view line, char delimiter) {
  Fields fields(line, delimiter);
  std::string_view f;
  size_t n = 0;
  while (fields.Next(&f)) ++n;
  return n;
}

bool ParseNumber(std::string_view field, double* v) {
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), *v);
  return ec == std::errc() && ptr == field.data() + field.size() && std::isfinite(*v);
}

// Reads `digits` decimal digits at *p.
bool Digits(std::string_view s, size_t* p, int digits, int* out) {
  if (*p + static_cast<size_t>(digits) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < digits; ++i) {
    const char c = s[(*p)++];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + doe - 719468;
}

// The civil time fields a timestamp format names.
struct CivilTime {
  int year = 1970, month = 1, day = 1, hour = 0;
};

// Reads the field of directive `d` (%Y, %y, %m, %d, %H; %M and %S are read and dropped) at *p.
bool ReadDirective(char d, std::string_view s, size_t* p, CivilTime* t) {
  int unused = 0;
  switch (d) {
    case 'Y': return Digits(s, p, 4, &t->year);
    case 'y': {
      const bool ok = Digits(s, p, 2, &t->year);
      t->year += 2000;
      return ok;
    }
    case 'm': return Digits(s, p, 2, &t->month);
    case 'd': return Digits(s, p, 2, &t->day);
    case 'H': return Digits(s, p, 2, &t->hour);
    default: return Digits(s, p, 2, &unused);
  }
}

// Hour of day and day of week (0 = Sunday) of a timestamp in `format`.
bool ParseTime(std::string_view s, const std::string& format, int* hour, int* weekday) {
  CivilTime t;
  size_t p = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%') {
      if (!ReadDirective(format[++i], s, &p, &t)) return false;
    } else if (p >= s.size() || s[p++] != format[i]) {
      return false;
    }
  }
  if (p != s.size() || t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31 || t.hour > 23) return false;
  *hour = t.hour;
  *weekday = static_cast<int>(((DaysFromCivil(t.year, t.month, t.day) + 4) % 7 + 7) % 7);
  return true;
}

void CloseSlot(Batch* out) { out->offsets.push_back(static_cast<uint32_t>(out->keys.size())); }

// Closes the slot `first_slot` (its keys from `begin`) and gives each of the column's other
// units, the slots after it, the same tokens' keys in that slot.
void CloseUnits(size_t begin, int first_slot, int units, Batch* out) {
  CloseSlot(out);
  const size_t end = out->keys.size();
  for (int unit = 1; unit < units; ++unit) {
    for (size_t k = begin; k < end; ++k) out->keys.push_back(WithSlot(out->keys[k], first_slot + unit));
    CloseSlot(out);
  }
}

// A bucketized column's key: the index of the bucket its value falls in; false when the
// field is not a number.
bool AddBucket(std::string_view field, const SchemaColumn& c, Batch* out) {
  double v = 0;
  if (field.empty()) return true;
  if (!ParseNumber(field, &v)) return false;
  const auto bucket = std::upper_bound(c.boundaries.begin(), c.boundaries.end(), v) - c.boundaries.begin();
  out->keys.push_back(SlotKey(c.slot, static_cast<uint64_t>(bucket)));
  return true;
}

void AddTokens(std::string_view field, const SchemaColumn& c, Batch* out) {
  Fields tokens(field, c.separator);
  std::string_view token;
  while (!field.empty() && tokens.Next(&token)) {
    if (!token.empty()) out->keys.push_back(SlotKey(c.slot, CriteoTokenHash(token)));
  }
}

// A time column's two slots: its hour of day, then its day of week.
bool AddTime(std::string_view field, const SchemaColumn& c, Batch* out, std::string* why) {
  int hour = 0, weekday = 0;
  const size_t begin = out->keys.size();
  if (!field.empty()) {
    if (!ParseTime(field, c.time_format, &hour, &weekday)) {
      *why = "column " + c.name + ": " + Quoted(field) + " does not match the time format '" + c.time_format + "'";
      return false;
    }
    out->keys.push_back(SlotKey(c.slot, static_cast<uint64_t>(hour)));
  }
  CloseUnits(begin, c.slot, c.units, out);
  const size_t weekdays = out->keys.size();
  if (!field.empty()) out->keys.push_back(SlotKey(c.slot + c.units, static_cast<uint64_t>(weekday)));
  CloseUnits(weekdays, c.slot + c.units, c.units, out);
  return true;
}

bool NotANumber(const SchemaColumn& c, std::string_view field, std::string* why) {
  *why = "column " + c.name + " is not a finite number: " + Quoted(field);
  return false;
}

// One feature column's contribution; false with *why set when the field is malformed.
bool ParseFeature(std::string_view field, const SchemaColumn& c, Batch* out, std::string* why) {
  const size_t begin = out->keys.size();  // the column's first slot's keys start here
  switch (c.role) {
    case ColumnRole::kCategorical:
      if (!field.empty()) out->keys.push_back(SlotKey(c.slot, CriteoTokenHash(field)));
      break;
    case ColumnRole::kNumeric: {
      double v = 0;
      if (!field.empty() && !ParseNumber(field, &v)) return NotANumber(c, field, why);
      out->dense.push_back(c.log1p ? TransformDense(v) : static_cast<float>(v));
      return true;
    }
    case ColumnRole::kBucketize:
      if (!AddBucket(field, c, out)) return NotANumber(c, field, why);
      break;
    case ColumnRole::kMultihot:
      AddTokens(field, c, out);
      break;
    case ColumnRole::kTime:
      return AddTime(field, c, out, why);
    default:
      return true;
  }
  CloseUnits(begin, c.slot, c.units, out);
  return true;
}

}  // namespace

bool ParseSchemaRow(std::string_view line, const InputSchema& schema, Batch* out, std::string* reason) {
  const size_t keys = out->keys.size(), offsets = out->offsets.size(), dense = out->dense.size();
  Fields fields(line, schema.delimiter);
  std::string_view field;
  float label = 0;
  std::string why;
  bool ok = true;
  for (const SchemaColumn& c : schema.columns) {
    if (!fields.Next(&field)) {
      ok = false;
      break;
    }
    if (c.role == ColumnRole::kLabel) {
      if (!ParseLabel(field, &label)) {
        why = "bad label " + Quoted(field) + " in column " + c.name + " (must be 0 or 1)";
        ok = false;
        break;
      }
    } else if (!ParseFeature(field, c, out, &why)) {
      ok = false;
      break;
    }
  }
  if (ok && !fields.more()) {
    out->labels.push_back(label);
    ++out->num_examples;
    return true;
  }
  out->keys.resize(keys);
  out->offsets.resize(offsets);
  out->dense.resize(dense);
  const size_t got = CountFields(line, schema.delimiter);
  *reason = got != schema.columns.size()
                ? "expected " + std::to_string(schema.columns.size()) + " columns, got " + std::to_string(got)
                : why;
  return false;
}

Status CheckHeader(std::string_view line, const InputSchema& schema) {
  Fields fields(line, schema.delimiter);
  std::string_view name;
  for (const SchemaColumn& c : schema.columns) {
    if (!fields.Next(&name)) {
      return Status::InvalidArgument("the header ends before column '" + c.name + "' (" + schema.source + ":" +
                                     std::to_string(c.line) + ")");
    }
    if (name != c.name) {
      return Status::InvalidArgument("the header names column " + std::to_string(&c - schema.columns.data() + 1) +
                                     " '" + std::string(name) + "', the schema '" + c.name + "' (" + schema.source +
                                     ":" + std::to_string(c.line) + ")");
    }
  }
  if (fields.more()) {
    return Status::InvalidArgument("the header has more columns than the schema's " + std::to_string(schema.columns.size()));
  }
  return Status::OK();
}

}  // namespace strata::data_internal
