// Documentation from the flag table: the --help text and the README's Markdown flag table.
// Defaults come from a default TrainOptions through each flag's `get`.
#include <fmt/format.h>

#include <algorithm>

#include "flag_table.h"
#include "flag_values.h"

namespace strata {
namespace {

// "--batch-size N", "--resume[=PATH]", "-h, --help".
std::string Usage(const FlagDef& f) {
  std::string out = f.short_name ? fmt::format("-{}, --{}", f.short_name, f.name) : fmt::format("--{}", f.name);
  if (f.value_name.empty()) return out;
  return out + (f.implicit.empty() ? fmt::format(" {}", f.value_name) : fmt::format("[={}]", f.value_name));
}

// What values look like: "integer >= 0", "number in (0, 1]", "adagrad | sgd".
std::string Accepts(const FlagDef& f, bool markdown) {
  if (!f.words.empty()) {
    std::vector<std::string> words = f.words;
    if (markdown) {
      for (std::string& w : words) w = "`" + w + "`";
    }
    const char* sep = markdown ? ", " : " | ";
    return JoinWords(words, sep, sep);
  }
  if (f.accepts == "text") return "";
  const std::string range = (f.integral ? IntegerBounds(f.bounds) : f.bounds).ToString();
  const char* join = range.empty() ? "" : (range[0] == '(' || range[0] == '[') ? " in " : " ";
  std::string out = fmt::format("{}{}{}", f.accepts, join, range);
  if (f.repeatable) out += ", comma-separated, repeatable";
  return out;
}

std::string DefaultText(const FlagDef& f) {
  if (f.required) return "(required)";
  static const TrainOptions defaults;
  return f.get ? f.get(defaults) : "";
}

// The groups in table order, each once.
std::vector<std::string_view> Groups() {
  std::vector<std::string_view> groups;
  for (const FlagDef& f : TrainFlags()) {
    if (groups.empty() || groups.back() != f.group) groups.push_back(f.group);
  }
  return groups;
}

// A Markdown table cell: `|` and `<` escaped so the text shows as written.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|' || c == '<') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string FlagsHelpText() {
  std::string out =
      "strata-train: hierarchical parameter server for CTR models (run under mpirun)\n"
      "Usage: mpirun -np RANKS strata-train --train PATH... [flags]\n";
  for (std::string_view group : Groups()) {
    out += fmt::format("\n{}:\n", group);
    for (const FlagDef& f : TrainFlags()) {
      if (f.group != group) continue;
      std::vector<std::string> notes;
      if (f.required) {
        notes.push_back("required");
      } else if (const std::string d = DefaultText(f); !d.empty()) {
        notes.push_back("default: " + d);
      }
      if (const std::string a = Accepts(f, false); !a.empty()) notes.push_back(a);
      std::string usage = Usage(f);
      usage.resize(std::max<size_t>(usage.size(), 32), ' ');
      std::string line = fmt::format("  {} {}", usage, f.help);
      if (!notes.empty()) line += " (" + JoinWords(notes, "; ", "; ") + ")";
      out += line + "\n";
    }
  }
  return out;
}

std::string FlagsMarkdown() {
  std::string out;
  for (std::string_view group : Groups()) {
    out += fmt::format("{}**{}**\n\n| flag | default | accepts | meaning |\n|---|---|---|---|\n",
                       out.empty() ? "" : "\n", group);
    for (const FlagDef& f : TrainFlags()) {
      if (f.group != group) continue;
      std::string d = DefaultText(f);
      if (d.empty()) {
        d = f.value_name.empty() ? "" : "none";  // a switch has no default
      } else if (!f.required) {
        d = "`" + d + "`";
      }
      out += fmt::format("| `{}` | {} | {} | {} |\n", Usage(f), d, Cell(Accepts(f, true)), Cell(f.help));
    }
  }
  return out;
}

}  // namespace strata
