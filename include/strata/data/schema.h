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
//   width N                              the embedding width of every slot without its own
// A column that feeds slots may end with `width N`: its slots' embedding width. A schema
// that gives widths gives every slot one (its own, or the `width` setting's), and then
// decides the embedding widths instead of --embedding-dim.
// Every non-label, non-ignored column feeds one slot (time: two) or one dense feature, in
// column order. An empty field is a missing value: no key in its slot, dense value 0.
// Keys are SlotKey(slot, CriteoTokenHash(token)) (hex tokens up to 16 digits are their
// value, other text its 64-bit FNV-1a), so the shipped configs/criteo.schema trains the
// same model as --format criteo.
//
// Slots of several widths: every row holds `unit_width` floats, the greatest common divisor
// of the widths, and a slot of width k * unit_width is k consecutive unit slots whose keys
// are the token's key in each of them (WithSlot). The unit slots' embeddings, concatenated,
// are the slot's embedding, pooled the same way; each tier stores k rows of unit_width for
// a token of the slot, so memory follows the widths. The model sees num_slots() unit slots
// of width unit_width. Without widths every slot is one unit of --embedding-dim.
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
  int slot = -1;                     // the first unit slot it feeds (time: the hour's
                                     // units, then the weekday's)
  int width = 0;                     // its slots' embedding width (0: none given)
  int units = 1;                     // unit slots per slot it feeds: width / unit_width
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
  // One per unit slot: NAME (time: NAME.hour, NAME.weekday), then "/j" for unit j of a
  // slot of several units.
  std::vector<std::string> slot_names;
  int num_dense = 0;
  int default_width = 0;             // the `width` setting (0: none)
  int unit_width = 0;                // floats of a row when the schema gives widths; 0: --embedding-dim

  int num_slots() const { return static_cast<int>(slot_names.size()); }
  // The unit slots pooled by their mean (ModelSpec::mean_slots), ascending.
  std::vector<int> MeanSlots() const;
  // Whether some slot spans several units (its width differs from another slot's).
  bool MixedWidths() const;
  // "widths 8..32 in units of 8 floats" for the start-up line ("" without widths).
  std::string WidthsText() const;
  bool operator==(const InputSchema&) const = default;
};

// Criteo's layout: label, I1..I13 numeric log1p, C1..C26 categorical, tab, no header.
InputSchema CriteoSchema();

// The layout of the same logs without their label column (files to score, such as
// Criteo's test set): the same slots and dense features; rows parse with label 0.
InputSchema WithoutLabel(const InputSchema& schema);

// Reads a schema file. Errors name the file and line: an unknown setting or role, a
// missing or bad argument, a duplicate column name, a width on a column without slots or
// a slot without one where others have one, no label or two, more than 255 unit slots,
// no feature at all.
Status ReadSchemaFile(const std::string& path, InputSchema* out);

// The same from text (`source` names it in errors).
Status ParseSchema(const std::string& text, const std::string& source, InputSchema* out);

}  // namespace strata
