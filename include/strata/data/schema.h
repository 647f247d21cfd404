// InputSchema: what each column of a delimited text input (CSV, TSV) means to the model,
// read from a schema file (`--schema FILE`) or built in (`--format criteo`).
//
// A schema file is plain text in the style of the flag files: `#` starts a comment, and
// each line is a setting or a column, columns in the file's order:
//   delimiter comma|tab|semicolon|pipe   the field separator (default tab)
//   header yes|no                        the first line of every file names the columns
//                                        (default no); names are checked against it
//   column NAME label                    0 or 1 (exactly one label column)
//   column NAME categorical              any text; its slot's key hashes the token
//   column NAME numeric log1p|raw        a dense feature: sign(x) log(1 + |x|), or x
//   column NAME bucketize B1,B2,...      a number turned categorical: the key is the count
//                                        of boundaries <= x (ascending boundaries)
//   column NAME multihot SEP [sum|mean]  tokens split at the character SEP, one key each,
//                                        pooled in the slot by their sum (default) or mean
//   column NAME time FORMAT              a timestamp (strptime-style: %Y %y %m %d %H %M %S
//                                        and literal characters) giving two slots: hour of
//                                        day and day of week
//   column NAME ignore                   read past (ids, leaks such as a conversion time)
// Every non-label, non-ignored column feeds one slot (time: two) or one dense feature, in
// column order. An empty field is a missing value: no key in its slot, dense value 0.
// Keys are SlotKey(slot, CriteoTokenHash(token)) (hex tokens up to 16 digits are their
// value, other text its 64-bit FNV-1a), so the shipped configs/criteo.schema trains the
// same model as --format criteo.
//
// An InputSchema is an immutable value once parsed; safe to share between threads.
#pragma once

#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata {

enum class ColumnRole { kLabel, kCategorical, kNumeric, kBucketize, kMultihot, kTime, kIgnore };

struct SchemaColumn {
  std::string name;
  ColumnRole role = ColumnRole::kIgnore;
  bool log1p = true;                 // numeric: log1p, else raw
  std::vector<double> boundaries;    // bucketize, ascending
  char separator = '|';              // multihot
  bool mean = false;                 // multihot: mean-pooled
  std::string time_format;           // time
  int slot = -1;                     // the first slot it feeds (time: hour, then weekday)
  int dense = -1;                    // numeric: its dense feature
  int line = 0;                      // its line in the schema file

  bool operator==(const SchemaColumn&) const = default;
};

struct InputSchema {
  std::string source;                // the schema file, or "--format criteo"
  std::string text;                  // the schema as text (Criteo's: its equivalent file), for checkpoints
  bool criteo = false;               // Criteo's fixed TSV layout, parsed by its own fast path
  char delimiter = '\t';
  bool header = false;
  std::vector<SchemaColumn> columns;
  std::vector<std::string> slot_names;  // one per slot ("hour" slots: NAME.hour, NAME.weekday)
  int num_dense = 0;

  int num_slots() const { return static_cast<int>(slot_names.size()); }
  // The slots pooled by their mean (ModelSpec::mean_slots), ascending.
  std::vector<int> MeanSlots() const;
  bool operator==(const InputSchema&) const = default;
};

// Criteo's layout: label, I1..I13 numeric log1p, C1..C26 categorical, tab, no header.
InputSchema CriteoSchema();

// The layout of the same logs without their label column (files to score, such as
// Criteo's test set): the same slots and dense features; rows parse with label 0.
InputSchema WithoutLabel(const InputSchema& schema);

// Reads a schema file. Errors name the file and line: an unknown setting or role, a
// missing or bad argument, a duplicate column name, no label or two, more than 255 slots,
// no feature at all.
Status ReadSchemaFile(const std::string& path, InputSchema* out);

// The same from text (`source` names it in errors).
Status ParseSchema(const std::string& text, const std::string& source, InputSchema* out);

}  // namespace strata
