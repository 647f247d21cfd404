// Schema files: line parsing, per-role arguments, slot and dense numbering.
#include "strata/data/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

#include "strata/model/model_spec.h"

namespace strata {
namespace {

constexpr int kMaxSlots = 255;  // the slot lives in the key's top byte

bool FeedsSlots(ColumnRole role) {
  return role == ColumnRole::kCategorical || role == ColumnRole::kBucketize || role == ColumnRole::kMultihot ||
         role == ColumnRole::kTime;
}

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The first word of *rest, removed from it.
std::string TakeWord(std::string* rest) {
  *rest = Trim(*rest);
  const size_t end = rest->find_first_of(" \t");
  std::string word = rest->substr(0, end);
  *rest = end == std::string::npos ? "" : Trim(rest->substr(end));
  return word;
}

bool SeparatorNamed(const std::string& word, char* out) {
  static const std::pair<const char*, char> kNames[] = {
      {"comma", ','}, {"tab", '\t'}, {"semicolon", ';'}, {"pipe", '|'}, {"space", ' '}, {"colon", ':'}};
  for (const auto& [name, c] : kNames) {
    if (word == name) {
      *out = c;
      return true;
    }
  }
  if (word.size() == 1 && word != "#") {
    *out = word[0];
    return true;
  }
  return false;
}

Status ParseBoundaries(const std::string& text, std::vector<double>* out) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !std::isfinite(v)) {
      return Status::InvalidArgument("bucketize boundary '" + item + "' is not a finite number");
    }
    if (!out->empty() && v <= out->back()) return Status::InvalidArgument("bucketize boundaries must ascend");
    out->push_back(v);
  }
  if (out->empty()) return Status::InvalidArgument("bucketize needs boundaries, e.g. 'bucketize 1,10,100'");
  return Status::OK();
}

Status CheckTimeFormat(const std::string& format) {
  if (format.empty()) return Status::InvalidArgument("time needs a format, e.g. 'time %Y-%m-%d %H:%M:%S'");
  bool hour = false, day = false;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (++i == format.size() || std::string("YymdHMS").find(format[i]) == std::string::npos) {
      return Status::InvalidArgument("time format '" + format + "': only %Y %y %m %d %H %M %S are known");
    }
    hour |= format[i] == 'H';
    day |= format[i] == 'd';
  }
  if (!hour || !day) return Status::InvalidArgument("time format '" + format + "' needs %H and %d (and a year and month)");
  return Status::OK();
}

// An embedding width: an integer in [1, kMaxEmbeddingDim].
Status ParseWidth(const std::string& word, int* width) {
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), *width);
  if (word.empty() || ec != std::errc() || ptr != word.data() + word.size() || *width < 1 || *width > kMaxEmbeddingDim) {
    return Status::InvalidArgument("width '" + word + "' is not an integer in [1, " + std::to_string(kMaxEmbeddingDim) + "]");
  }
  return Status::OK();
}

// Removes a trailing `width N` from a column line's role and arguments, into c->width.
Status TakeColumnWidth(std::string* rest, SchemaColumn* c) {
  const size_t last = rest->find_last_of(" \t");
  if (last == std::string::npos) return Status::OK();
  const std::string head = Trim(rest->substr(0, last));
  const size_t word = head.find_last_of(" \t");
  if (head.substr(word == std::string::npos ? 0 : word + 1) != "width") return Status::OK();
  STRATA_RETURN_IF_ERROR(ParseWidth(rest->substr(last + 1), &c->width));
  *rest = word == std::string::npos ? "" : Trim(head.substr(0, word));
  return Status::OK();
}

// The role and its arguments of one `column NAME ROLE ...` line.
Status ParseRole(std::string rest, SchemaColumn* c) {
  static const std::pair<const char*, ColumnRole> kRoles[] = {
      {"label", ColumnRole::kLabel},       {"categorical", ColumnRole::kCategorical},
      {"numeric", ColumnRole::kNumeric},   {"bucketize", ColumnRole::kBucketize},
      {"multihot", ColumnRole::kMultihot}, {"time", ColumnRole::kTime},
      {"ignore", ColumnRole::kIgnore}};
  const std::string role = TakeWord(&rest);
  const auto it = std::find_if(std::begin(kRoles), std::end(kRoles), [&](const auto& r) { return role == r.first; });
  if (it == std::end(kRoles)) {
    return Status::InvalidArgument("unknown role '" + role +
                                   "' (label, categorical, numeric, bucketize, multihot, time or ignore)");
  }
  c->role = it->second;
  switch (c->role) {
    case ColumnRole::kNumeric: {
      const std::string t = TakeWord(&rest);
      if (t != "log1p" && t != "raw") return Status::InvalidArgument("numeric needs a transform: log1p or raw");
      c->log1p = t == "log1p";
      break;
    }
    case ColumnRole::kBucketize:
      STRATA_RETURN_IF_ERROR(ParseBoundaries(TakeWord(&rest), &c->boundaries));
      break;
    case ColumnRole::kMultihot:
      if (!SeparatorNamed(TakeWord(&rest), &c->separator)) {
        return Status::InvalidArgument("multihot needs a separator: one character or comma, tab, semicolon, pipe, space, colon");
      }
      if (!rest.empty()) {
        const std::string pooling = TakeWord(&rest);
        if (pooling != "sum" && pooling != "mean") return Status::InvalidArgument("multihot pooling: sum or mean, not '" + pooling + "'");
        c->mean = pooling == "mean";
      }
      break;
    case ColumnRole::kTime:
      c->time_format = rest;
      rest.clear();
      STRATA_RETURN_IF_ERROR(CheckTimeFormat(c->time_format));
      break;
    default:
      break;
  }
  if (!rest.empty()) return Status::InvalidArgument("unexpected '" + rest + "' after the role");
  if (c->width > 0 && !FeedsSlots(c->role)) return Status::InvalidArgument("width is for columns that feed slots");
  return Status::OK();
}

// The unit width and each slot column's units, when the schema gives widths: every slot
// then needs one, its own or the `width` setting's.
Status ResolveUnits(const std::string& source, InputSchema* s) {
  int unit = 0;
  const SchemaColumn* bare = nullptr;
  for (SchemaColumn& c : s->columns) {
    if (!FeedsSlots(c.role)) continue;
    if (c.width == 0) c.width = s->default_width;
    if (c.width == 0) {
      if (bare == nullptr) bare = &c;
    } else {
      unit = std::gcd(unit, c.width);
    }
  }
  if (unit == 0) return Status::OK();
  if (bare != nullptr) {
    return Status::InvalidArgument(fmt::format("{}:{}: column {} has no width while others have one: end its line "
                                               "with 'width N', or give every such slot one with a 'width N' line",
                                               source, bare->line, bare->name));
  }
  s->unit_width = unit;
  for (SchemaColumn& c : s->columns) {
    if (FeedsSlots(c.role)) c.units = c.width / unit;
  }
  return Status::OK();
}

// Names the unit slots of one slot: NAME, or NAME/0 .. NAME/k-1.
void AddUnitSlots(const std::string& name, int units, InputSchema* s) {
  for (int unit = 0; unit < units; ++unit) {
    s->slot_names.push_back(units == 1 ? name : name + "/" + std::to_string(unit));
  }
}

// Gives each feature column its slots or dense index, in column order.
Status NumberFeatures(InputSchema* s) {
  int labels = 0;
  for (SchemaColumn& c : s->columns) {
    switch (c.role) {
      case ColumnRole::kLabel: ++labels; break;
      case ColumnRole::kNumeric: c.dense = s->num_dense++; break;
      case ColumnRole::kTime:
        c.slot = s->num_slots();
        AddUnitSlots(c.name + ".hour", c.units, s);
        AddUnitSlots(c.name + ".weekday", c.units, s);
        break;
      case ColumnRole::kIgnore: break;
      default:
        c.slot = s->num_slots();
        AddUnitSlots(c.name, c.units, s);
    }
  }
  if (labels != 1) return Status::InvalidArgument("a schema needs exactly one label column, it has " + std::to_string(labels));
  if (s->num_slots() == 0) return Status::InvalidArgument("a schema needs at least one categorical column (a slot)");
  if (s->num_slots() > kMaxSlots) {
    return Status::InvalidArgument(
        s->unit_width == 0 ? fmt::format("{} slots, at most {}", s->num_slots(), kMaxSlots)
                           : fmt::format("{} unit slots of {} floats (a slot of width w is w / {} of them), at most {}: "
                                         "choose widths with a larger common divisor",
                                         s->num_slots(), s->unit_width, s->unit_width, kMaxSlots));
  }
  return Status::OK();
}

// One non-empty line: a setting or a column.
Status ParseLine(std::string rest, int line, InputSchema* s, std::set<std::string>* names) {
  const std::string what = TakeWord(&rest);
  if (what == "delimiter") {
    if (!SeparatorNamed(TakeWord(&rest), &s->delimiter) || !rest.empty()) {
      return Status::InvalidArgument("delimiter: comma, tab, semicolon, pipe or one character");
    }
    return Status::OK();
  }
  if (what == "header") {
    const std::string v = TakeWord(&rest);
    if ((v != "yes" && v != "no") || !rest.empty()) return Status::InvalidArgument("header: yes or no");
    s->header = v == "yes";
    return Status::OK();
  }
  if (what == "width") {
    if (s->default_width != 0) return Status::InvalidArgument("the width is set twice");
    STRATA_RETURN_IF_ERROR(ParseWidth(TakeWord(&rest), &s->default_width));
    return rest.empty() ? Status::OK() : Status::InvalidArgument("width: one integer");
  }
  if (what != "column") return Status::InvalidArgument("unknown setting '" + what + "' (delimiter, header, width or column)");
  SchemaColumn c;
  c.name = TakeWord(&rest);
  c.line = line;
  if (c.name.empty()) return Status::InvalidArgument("column needs a name and a role");
  if (!names->insert(c.name).second) return Status::InvalidArgument("column '" + c.name + "' is named twice");
  STRATA_RETURN_IF_ERROR(TakeColumnWidth(&rest, &c));
  STRATA_RETURN_IF_ERROR(ParseRole(rest, &c));
  s->columns.push_back(std::move(c));
  return Status::OK();
}

}  // namespace

std::vector<int> InputSchema::MeanSlots() const {
  std::vector<int> slots;
  for (const SchemaColumn& c : columns) {
    if (c.role != ColumnRole::kMultihot || !c.mean) continue;
    for (int unit = 0; unit < c.units; ++unit) slots.push_back(c.slot + unit);
  }
  return slots;
}

bool InputSchema::MixedWidths() const {
  return std::any_of(columns.begin(), columns.end(), [](const SchemaColumn& c) { return c.units > 1; });
}

std::string InputSchema::WidthsText() const {
  if (unit_width == 0) return "";
  int least = kMaxEmbeddingDim, most = 0;
  for (const SchemaColumn& c : columns) {
    if (!FeedsSlots(c.role)) continue;
    least = std::min(least, c.width);
    most = std::max(most, c.width);
  }
  if (least == most) return fmt::format("slots {} wide", most);
  return fmt::format("slots {}..{} wide: {} unit slots of {} floats", least, most, num_slots(), unit_width);
}

InputSchema CriteoSchema() {
  InputSchema s;
  s.source = "--format criteo";
  s.criteo = true;
  auto add = [&s](std::string name, ColumnRole role) {
    SchemaColumn c;
    c.name = std::move(name);
    c.role = role;
    s.columns.push_back(std::move(c));
  };
  add("label", ColumnRole::kLabel);
  for (int i = 1; i <= 13; ++i) add(fmt::format("I{}", i), ColumnRole::kNumeric);
  for (int i = 1; i <= 26; ++i) add(fmt::format("C{}", i), ColumnRole::kCategorical);
  const Status st = NumberFeatures(&s);
  (void)st;  // a fixed, valid layout
  s.text = "delimiter tab\nheader no\n";
  for (const SchemaColumn& c : s.columns) {
    s.text += "column " + c.name + (c.role == ColumnRole::kLabel ? " label\n" : c.role == ColumnRole::kNumeric ? " numeric log1p\n" : " categorical\n");
  }
  return s;
}

InputSchema WithoutLabel(const InputSchema& schema) {
  InputSchema s = schema;
  s.criteo = false;  // the generic parser reads it
  s.source = schema.source + " without its label";
  s.columns.erase(std::remove_if(s.columns.begin(), s.columns.end(),
                                 [](const SchemaColumn& c) { return c.role == ColumnRole::kLabel; }),
                  s.columns.end());
  return s;
}

Status ParseSchema(const std::string& text, const std::string& source, InputSchema* out) {
  InputSchema s;
  s.source = source;
  s.text = text;
  std::set<std::string> names;
  std::stringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const Status st = ParseLine(line, number, &s, &names);
    if (!st.ok()) return Status::InvalidArgument(source + ":" + std::to_string(number) + ": " + st.message());
  }
  STRATA_RETURN_IF_ERROR(ResolveUnits(source, &s));
  const Status st = NumberFeatures(&s);
  if (!st.ok()) return Status::InvalidArgument(source + ": " + st.message());
  *out = std::move(s);
  return Status::OK();
}

Status ReadSchemaFile(const std::string& path, InputSchema* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot open schema file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseSchema(text.str(), path, out);
}

}  // namespace strata
