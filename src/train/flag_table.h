// The flag table of strata-train: one FlagDef per flag, declared once in flag_table.cpp,
// from which come parsing and per-flag validation (options.cpp), the set of flags a
// --config file may name, --help and --help-markdown (the README's flag table).
//
// Promises: a flag's default is the value its field has in a default TrainOptions (never a
// string kept beside it); FlagDef::set parses one value, checks it against the flag's
// bounds or words, and stores it, or returns an InvalidArgument naming the flag and leaves
// the field as it was; FlagDef::get(TrainOptions{}) parses back to the same value.
//
// Thread safety: TrainFlags() is built once on first use (a function-local static) and is
// read-only afterwards; every function here may be called from any thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/common/interval.h"
#include "strata/common/status.h"
#include "strata/train/options.h"

namespace strata {

enum class FlagKind {
  kValue,         // sets a TrainOptions field through set/get
  kConfig,        // --config FILE: read by the parser, never from a config file
  kHelp,          // -h, --help: print help and exit
  kHelpMarkdown,  // --help-markdown: print the flag table as Markdown and exit
};

struct FlagDef {
  std::string_view name;        // long name without "--"
  std::string_view group;       // section of --help and of the README table
  std::string_view value_name;  // "N", "X", "PATH...", ...; empty for a switch (takes no value)
  std::string_view help;        // one sentence, lower case, no final period
  FlagKind kind = FlagKind::kValue;
  char short_name = 0;          // -h; 0: none
  bool required = false;        // the run needs it (checked after every flag is read)
  bool repeatable = false;      // each occurrence appends; REQUIRES: the default is empty
  std::string_view implicit;    // value of `--name` given alone (--resume); empty: a value is needed
  std::string_view accepts;     // what values look like, for the docs ("integer", "number", ...)
  Interval bounds;              // numbers (or each item of a number list) must lie in it
  bool integral = false;        // the field holds integers
  std::vector<std::string> words;  // a word flag's accepted values, in the order messages list them
  // Parses `text` into the field of *o, or returns InvalidArgument naming the flag.
  std::function<Status(std::string_view text, TrainOptions* o)> set;
  // The field's value in *o written as this flag's value ("512,256,128", "on", "0.05").
  std::function<std::string(const TrainOptions& o)> get;
};

// Every flag, grouped, in --help order.
const std::vector<FlagDef>& TrainFlags();

// The flag with this long name; nullptr if there is none.
const FlagDef* FindFlag(std::string_view name);

// The output of --help: every flag with its value, default and accepted values.
std::string FlagsHelpText();

// The output of --help-markdown: the README's flag table.
std::string FlagsMarkdown();

}  // namespace strata
