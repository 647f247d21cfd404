// Schema files: line parsing, per-role arguments, slot and dense numbering.
#include "strata/data/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace strata {
namespace {

constexpr int kMaxSlots = 255;  // the slot lives in the key's top byte

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
  return Status::OK();
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
        s->slot_names.push_back(c.name + ".hour");
        s->slot_names.push_back(c.name + ".weekday");
        break;
      case ColumnRole::kIgnore: break;
      default:
        c.slot = s->num_slots();
        s->slot_names.push_back(c.name);
    }
  }
  if (labels != 1) return Status::InvalidArgument("a schema needs exactly one label column, it has " + std::to_string(labels));
  if (s->num_slots() == 0) return Status::InvalidArgument("a schema needs at least one categorical column (a slot)");
  if (s->num_slots() > kMaxSlots) {
    return Status::InvalidArgument(std::to_string(s->num_slots()) + " slots, at most " + std::to_string(kMaxSlots));
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
  if (what != "column") return Status::InvalidArgument("unknown setting '" + what + "' (delimiter, header or column)");
  SchemaColumn c;
  c.name = TakeWord(&rest);
  c.line = line;
  if (c.name.empty()) return Status::InvalidArgument("column needs a name and a role");
  if (!names->insert(c.name).second) return Status::InvalidArgument("column '" + c.name + "' is named twice");
  STRATA_RETURN_IF_ERROR(ParseRole(rest, &c));
  s->columns.push_back(std::move(c));
  return Status::OK();
}

}  // namespace

std::vector<int> InputSchema::MeanSlots() const {
  std::vector<int> slots;
  for (const SchemaColumn& c : columns) {
    if (c.role == ColumnRole::kMultihot && c.mean) slots.push_back(c.slot);
  }
  return slots;
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
