// strata-inspect: offline questions about checkpoints and delta exports (format in
// strata/ckpt/format.h). No MPI. Each subcommand reads the files through the checkpoint
// library, prints to stdout, and returns a Status; main maps it to the exit code:
// 0 ok, 1 a missing, truncated or corrupted file (or a failed check), 2 a usage error or
// arguments that do not fit together (InvalidArgument).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "strata/ckpt/format.h"
#include "strata/common/status.h"

namespace strata::inspect {

struct Args {
  std::vector<std::string> positional;         // after the subcommand
  std::map<std::string, std::string> options;  // "--by norm" -> {"by", "norm"}
};

// CKPT arguments: a checkpoint directory or a checkpoint-dir holding LATEST.
Status OpenCheckpoint(const std::string& arg, std::string* path, ckpt::CheckpointMeta* meta);
// Parses a decimal or 0x-hex u64; InvalidArgument naming `what` otherwise.
Status ParseU64(const std::string& text, const std::string& what, uint64_t* value);

Status Summary(const Args& args);  // summary CKPT
Status Verify(const Args& args);   // verify CKPT
Status Get(const Args& args);      // get CKPT KEY...
Status Top(const Args& args);      // top CKPT N --by freq|norm
Status Export(const Args& args);   // export CKPT --format tsv [--out FILE]
Status Diff(const Args& args);     // diff A B
Status Fold(const Args& args);     // fold BASE DELTA... [--check CKPT]

}  // namespace strata::inspect
