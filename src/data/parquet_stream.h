// ParquetStream: an Apache Parquet file read as delimited text, so that a Parquet input
// goes through the same line reader, shard plan and schema parsing as the CSV of its rows,
// and trains to bitwise the same model. The text is a header line (the column names, which
// the schema's header check matches) and one line a row. Values print as a CSV would hold
// them: strings and binaries as they are, integers in decimal, floating point in the
// shortest form that reads back to the same value, booleans as 0 or 1, dictionary values as
// their dictionary entry, nulls as empty fields; a field holding the delimiter or a double
// quote is quoted (quotes doubled). Row groups are the unit of reading: a stream that starts
// at line L decodes only the row groups from the one holding row L - 1 on. Errors name the
// file: not Parquet, truncated or corrupt, a column type with no text form (lists, structs,
// dates...), a value with a line break. Built without Arrow (no `make deps`), Open and
// ParquetRowCount fail, saying so. Not thread-safe; one per reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "strata/common/status.h"

namespace strata::data_internal {

// Sets *rows to the file's row count, from its footer.
Status ParquetRowCount(const std::string& path, uint64_t* rows);

class ParquetStream {
 public:
  ParquetStream();
  ParquetStream(const ParquetStream&) = delete;
  ParquetStream& operator=(const ParquetStream&) = delete;
  ~ParquetStream();

  // Opens the file as text with fields joined by `delimiter`, positioned at line
  // first_line (0: the header line; L >= 1: row L - 1); *skipped is set to the lines
  // passed over without reading them (the caller skips the rest of the way itself).
  Status Open(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped);
  // Copies up to n bytes of the text into buf; *got == 0 only at the end of the file.
  Status Read(char* buf, size_t n, size_t* got);
  void Close();

 private:
  friend Status ParquetRowCount(const std::string& path, uint64_t* rows);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::data_internal
