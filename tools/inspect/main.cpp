// strata-inspect entry point: parses `strata-inspect COMMAND ARGS... [--option value]`,
// checks argument counts and option names, runs the command and sets the exit code
// (0 ok, 1 bad or missing files and failed checks, 2 usage errors).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "inspect.h"
#include "strata/ckpt/checkpoint.h"

namespace strata::inspect {
namespace {

struct Command {
  const char* name;
  const char* usage;
  size_t min_args, max_args;
  std::set<std::string> options;
  Status (*run)(const Args&);
};

const Command kCommands[] = {
    {"summary", "summary CKPT", 1, 1, {}, Summary},
    {"get", "get CKPT KEY...", 2, SIZE_MAX, {}, Get},
    {"top", "top CKPT N [--by freq|norm]", 2, 2, {"by"}, Top},
    {"diff", "diff A B", 2, 2, {}, Diff},
    {"verify", "verify CKPT", 1, 1, {}, Verify},
    {"export", "export CKPT [--format tsv] [--out FILE]", 1, 1, {"format", "out"}, Export},
    {"fold", "fold BASE DELTA... [--check CKPT]", 2, SIZE_MAX, {"check"}, Fold},
};

void PrintUsage(std::FILE* to) {
  std::fprintf(to, "usage: strata-inspect COMMAND ...\n"
                   "CKPT is a checkpoint directory, or a checkpoint-dir holding LATEST.\n");
  for (const Command& c : kCommands) std::fprintf(to, "  strata-inspect %s\n", c.usage);
}

int UsageError(const std::string& msg, const Command* c) {
  std::fprintf(stderr, "strata-inspect: %s\n", msg.c_str());
  if (c) std::fprintf(stderr, "usage: strata-inspect %s\n", c->usage);
  else PrintUsage(stderr);
  return 2;
}

// The command's arguments from argv[2..]: positional ones, and options as --name=value or
// --name value. Returns "" or what was wrong.
std::string ParseArgs(int argc, char** argv, const Command& cmd, Args* args) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      args->positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return a + " needs a value";
    }
    if (!cmd.options.count(name)) return "unknown option --" + name;
    args->options[name] = value;
  }
  if (args->positional.size() < cmd.min_args || args->positional.size() > cmd.max_args) {
    return "wrong number of arguments";
  }
  return "";
}

int Run(int argc, char** argv) {
  if (argc < 2) return UsageError("missing command", nullptr);
  if (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    PrintUsage(stdout);
    return 0;
  }
  const Command* cmd = nullptr;
  for (const Command& c : kCommands) cmd = argv[1] == std::string(c.name) ? &c : cmd;
  if (!cmd) return UsageError(std::string("unknown command '") + argv[1] + "'", nullptr);
  Args args;
  const std::string wrong = ParseArgs(argc, argv, *cmd, &args);
  if (!wrong.empty()) return UsageError(wrong, cmd);
  const Status st = cmd->run(args);
  if (st.ok()) return 0;
  std::fflush(stdout);
  std::fprintf(stderr, "strata-inspect %s: %s\n", cmd->name, st.ToString().c_str());
  return st.code() == Status::Code::kInvalidArgument ? 2 : 1;
}

}  // namespace

Status OpenCheckpoint(const std::string& arg, std::string* path, ckpt::CheckpointMeta* meta) {
  STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(arg, path));
  return ckpt::ReadMeta(*path, meta);
}

Status ParseU64(const std::string& text, const std::string& what, uint64_t* value) {
  const bool hex = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
  const std::string digits = hex ? text.substr(2) : text;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoull(digits.c_str(), &end, hex ? 16 : 10);
  if (digits.empty() || *end != '\0' || errno != 0 || digits[0] == '-') {
    return Status::InvalidArgument(what + ": '" + text + "' is not an unsigned 64-bit number");
  }
  return Status::OK();
}

}  // namespace strata::inspect

int main(int argc, char** argv) { return strata::inspect::Run(argc, argv); }
