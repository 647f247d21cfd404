// ParquetStream (data/parquet_stream.h): Apache Arrow's Parquet reader, one row group at a
// time, printed as delimited text. Without Arrow in the build, the calls fail with a hint.
#include "data/parquet_stream.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#if STRATA_WITH_PARQUET
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#endif

namespace strata::data_internal {

#if STRATA_WITH_PARQUET
namespace {

Status Failed(const std::string& path, const std::string& what) {
  return Status::IOError("input file " + path + ": " + what);
}

Status Failed(const std::string& path, const arrow::Status& st) {
  return Failed(path, "not a readable Parquet file (" + st.ToString() + ")");
}

template <typename Number>
void AppendNumber(std::string* out, Number v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);  // floats: shortest round trip
  out->append(buf, r.ptr);
}

template <typename ArrayType>
void AppendNumberOf(const arrow::Array& array, int64_t i, std::string* out) {
  AppendNumber(out, static_cast<const ArrayType&>(array).Value(i));
}

// Appends the digits of array[i] (not null) for a numeric array; false for another type.
bool AppendNumberAt(const arrow::Array& array, int64_t i, std::string* out) {
  using arrow::Type;
  switch (array.type_id()) {
    case Type::INT8: AppendNumberOf<arrow::Int8Array>(array, i, out); return true;
    case Type::INT16: AppendNumberOf<arrow::Int16Array>(array, i, out); return true;
    case Type::INT32: AppendNumberOf<arrow::Int32Array>(array, i, out); return true;
    case Type::INT64: AppendNumberOf<arrow::Int64Array>(array, i, out); return true;
    case Type::UINT8: AppendNumberOf<arrow::UInt8Array>(array, i, out); return true;
    case Type::UINT16: AppendNumberOf<arrow::UInt16Array>(array, i, out); return true;
    case Type::UINT32: AppendNumberOf<arrow::UInt32Array>(array, i, out); return true;
    case Type::UINT64: AppendNumberOf<arrow::UInt64Array>(array, i, out); return true;
    case Type::FLOAT: AppendNumberOf<arrow::FloatArray>(array, i, out); return true;
    case Type::DOUBLE: AppendNumberOf<arrow::DoubleArray>(array, i, out); return true;
    default: return false;
  }
}

// Appends the text of array[i] (not null) as a CSV would hold it; false for a type with no
// text form.
bool AppendValue(const arrow::Array& array, int64_t i, std::string* out) {
  using arrow::Type;
  switch (array.type_id()) {
    case Type::STRING: case Type::BINARY: {
      const auto view = static_cast<const arrow::BinaryArray&>(array).GetView(i);
      out->append(view.data(), view.size());
      return true;
    }
    case Type::LARGE_STRING: case Type::LARGE_BINARY: {
      const auto view = static_cast<const arrow::LargeBinaryArray&>(array).GetView(i);
      out->append(view.data(), view.size());
      return true;
    }
    case Type::BOOL: out->push_back(static_cast<const arrow::BooleanArray&>(array).Value(i) ? '1' : '0'); return true;
    case Type::DICTIONARY: {
      const auto& dict = static_cast<const arrow::DictionaryArray&>(array);
      return AppendValue(*dict.dictionary(), dict.GetValueIndex(i), out);
    }
    default: return AppendNumberAt(array, i, out);
  }
}

}  // namespace

struct ParquetStream::Impl {
  std::string path;
  char delimiter = '\t';
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::vector<std::string> names;
  int next_group = 0;
  std::shared_ptr<arrow::Table> group;  // the row group being printed, one chunk a column
  int64_t next_row = 0;                 // of group
  std::string text;                     // printed, not yet read
  size_t text_pos = 0;

  Status OpenFile(const std::string& file) {
    path = file;
    auto input = arrow::io::ReadableFile::Open(path);
    if (!input.ok()) return Failed(path, input.status());
    auto opened = parquet::arrow::OpenFile(*input, arrow::default_memory_pool());
    if (!opened.ok()) return Failed(path, opened.status());
    reader = std::move(*opened);
    std::shared_ptr<arrow::Schema> schema;
    const arrow::Status st = reader->GetSchema(&schema);
    if (!st.ok()) return Failed(path, st);
    names.clear();
    for (const auto& field : schema->fields()) names.push_back(field->name());
    return Status::OK();
  }

  // Appends one field, quoted when it holds the delimiter or starts with a quote.
  Status AppendField(const std::string& value, std::string* line) const {
    if (value.find_first_of("\n\r") != std::string::npos) {
      return Failed(path, "a value with a line break (\"" + value.substr(0, 40) + "\"): not readable as a line");
    }
    const bool quote = value.find(delimiter) != std::string::npos || (!value.empty() && value.front() == '"');
    if (quote) line->push_back('"');
    line->append(value);
    if (quote) line->push_back('"');
    return Status::OK();
  }

  Status PrintHeader() {
    std::string line;
    for (size_t c = 0; c < names.size(); ++c) {
      if (c > 0) line.push_back(delimiter);
      STRATA_RETURN_IF_ERROR(AppendField(names[c], &line));
    }
    text.append(line).push_back('\n');
    return Status::OK();
  }

  Status LoadGroup(int index) {
    auto table = reader->ReadRowGroup(index);
    arrow::Status st = table.status();
    if (st.ok()) {
      auto combined = (*table)->CombineChunks();
      st = combined.status();
      if (st.ok()) group = *combined;
    }
    if (!st.ok()) return Failed(path, "row group " + std::to_string(index) + ": " + st.ToString());
    next_row = 0;
    return Status::OK();
  }

  Status PrintRow(int64_t row) {
    std::string field;
    for (int c = 0; c < group->num_columns(); ++c) {
      if (c > 0) text.push_back(delimiter);
      const arrow::Array& array = *group->column(c)->chunk(0);
      if (array.IsNull(row)) continue;
      field.clear();
      if (!AppendValue(array, row, &field)) {
        return Failed(path, "column " + names[static_cast<size_t>(c)] + " has type " + array.type()->ToString() +
                                ", which has no text form (use strings or numbers)");
      }
      STRATA_RETURN_IF_ERROR(AppendField(field, &text));
    }
    text.push_back('\n');
    return Status::OK();
  }

  // Prints about `bytes` more bytes of text; prints nothing at the end of the file.
  Status PrintMore(size_t bytes) {
    text.erase(0, text_pos);
    text_pos = 0;
    while (text.size() < bytes) {
      if (!group || next_row == group->num_rows()) {
        if (next_group == reader->num_row_groups()) return Status::OK();
        STRATA_RETURN_IF_ERROR(LoadGroup(next_group++));
        continue;
      }
      STRATA_RETURN_IF_ERROR(PrintRow(next_row++));
    }
    return Status::OK();
  }
};

Status ParquetRowCount(const std::string& path, uint64_t* rows) {
  ParquetStream::Impl impl;
  try {
    STRATA_RETURN_IF_ERROR(impl.OpenFile(path));
    *rows = static_cast<uint64_t>(impl.reader->parquet_reader()->metadata()->num_rows());
  } catch (const parquet::ParquetException& e) {
    return Failed(path, e.what());
  }
  return Status::OK();
}

ParquetStream::ParquetStream() = default;
ParquetStream::~ParquetStream() = default;

// Starts at the row group holding row first_line - 1; line 0 is the header.
Status ParquetStream::Open(const std::string& path, char delimiter, uint64_t first_line, uint64_t* skipped) {
  impl_ = std::make_unique<Impl>();
  impl_->delimiter = delimiter;
  *skipped = 0;
  try {
    STRATA_RETURN_IF_ERROR(impl_->OpenFile(path));
    if (first_line == 0) return impl_->PrintHeader();
    const auto metadata = impl_->reader->parquet_reader()->metadata();
    uint64_t rows_before = 0;
    while (impl_->next_group < metadata->num_row_groups()) {
      const auto group_rows = static_cast<uint64_t>(metadata->RowGroup(impl_->next_group)->num_rows());
      if (rows_before + group_rows >= first_line) break;  // holds row first_line - 1
      rows_before += group_rows;
      ++impl_->next_group;
    }
    *skipped = 1 + rows_before;
  } catch (const parquet::ParquetException& e) {
    return Failed(path, e.what());
  }
  return Status::OK();
}

Status ParquetStream::Read(char* buf, size_t n, size_t* got) {
  *got = 0;
  if (!impl_) return Status::OK();
  try {
    if (impl_->text.size() - impl_->text_pos < n) STRATA_RETURN_IF_ERROR(impl_->PrintMore(n));
  } catch (const parquet::ParquetException& e) {
    return Failed(impl_->path, e.what());
  }
  *got = std::min(n, impl_->text.size() - impl_->text_pos);
  std::memcpy(buf, impl_->text.data() + impl_->text_pos, *got);
  impl_->text_pos += *got;
  return Status::OK();
}

void ParquetStream::Close() { impl_.reset(); }

#else  // !STRATA_WITH_PARQUET

namespace {
Status NoParquet(const std::string& path) {
  return Status::InvalidArgument("input file " + path +
                               " is Parquet, and this build has no Parquet reader: run `make deps`, then `make`");
}
}  // namespace

struct ParquetStream::Impl {};
ParquetStream::ParquetStream() = default;
ParquetStream::~ParquetStream() = default;
Status ParquetRowCount(const std::string& path, uint64_t*) { return NoParquet(path); }
Status ParquetStream::Open(const std::string& path, char, uint64_t, uint64_t*) { return NoParquet(path); }
Status ParquetStream::Read(char*, size_t, size_t* got) {
  *got = 0;
  return Status::OK();
}
void ParquetStream::Close() {}

#endif  // STRATA_WITH_PARQUET

}  // namespace strata::data_internal
