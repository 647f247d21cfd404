// Row export: writes every row a rank owns as TSV, one row per line:
//   key \t freq \t last_pass \t e_0 ... e_{dim-1} \t s_0 ... s_{dim-1}
// floats with 9 significant digits (round-trip exact for float). Used by --export-rows
// to compare runs and to hand rows to other tools.
#pragma once

#include <string>

#include "strata/common/row.h"
#include "strata/store/row_store.h"

namespace strata {

// Writes dir/rows-<rank>.tsv (creating dir); IOError naming the file on failure.
Status ExportRowsTsv(RowStore& store, const RowLayout& layout, const std::string& dir, int rank);

}  // namespace strata
