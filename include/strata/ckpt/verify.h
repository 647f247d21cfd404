// Offline integrity check of a checkpoint or delta: every dataset read (through its
// Fletcher32 checksums where it has them), every rank file present and matching meta.h5's
// row count and CRC32, every key distinct and stored by its owner, dense shapes consistent with the
// model. Used by strata-inspect verify; reads each file once, holds 8 bytes per key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata::ckpt {

struct VerifyReport {
  std::vector<std::string> problems;  // one line each, naming the file and dataset
  uint64_t rows = 0;                  // rows read from intact rank files
  int rank_files = 0;                 // rank files read without error
};

// OK when nothing is wrong; otherwise Corruption (or NotFound for a missing meta.h5)
// carrying the first problem, with every problem found listed in *report.
Status VerifyCheckpoint(const std::string& ckpt_path, VerifyReport* report);

}  // namespace strata::ckpt
