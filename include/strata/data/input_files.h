// Input files of a run: expanding the user's file names and globs into a concrete list,
// and telling compressed from plain files. Everything here is a pure function of the file
// system at call time; safe to call from any thread.
#pragma once

#include <string>
#include <vector>

#include "strata/common/status.h"
#include "strata/data/shard_plan.h"

namespace strata {

// Appends to *files, in order, the files each pattern names: a pattern with glob
// metacharacters (*, ?, [) expands with glob(3) to its sorted matches; any other pattern is
// taken as a path. A path (named or matched) that is a directory stands for its data files
// in name order: its files whose names start with neither '.' nor '_' (not recursive), as
// Spark or Hadoop write part files beside _SUCCESS and .crc files. Every resulting file is
// opened once to check it is readable. Errors (nothing written to *files): a glob that
// matches nothing, a missing file, a directory without data files, a file that cannot be
// opened; the message names the pattern, the directory or the file.
// REQUIRES: files != nullptr.
Status ExpandInputs(const std::vector<std::string>& patterns, std::vector<std::string>* files);

// Sets *encoding from the file's first bytes, whatever its name: gzip's magic (1f 8b),
// Parquet's ("PAR1"), else plain (a file shorter than a magic is plain). Errors: the file
// cannot be opened or read.
Status DetectEncoding(const std::string& path, FileEncoding* encoding);

}  // namespace strata
