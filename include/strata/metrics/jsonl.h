// JSON-lines metrics output: JsonRecord builds one flat JSON object, JsonlWriter appends
// records to a file, one per line, flushed after each so a killed run keeps every record
// it finished.
//
// Numbers are written so runs can be compared bit for bit: doubles with 17 significant
// digits (strtod reads back the identical double), non-finite doubles as null (JSON has no
// NaN or infinity), integers exactly. Strings are escaped per RFC 8259. Keys are written in
// the order they were added; adding a key twice writes it twice.
//
// Thread safety: neither class is thread-safe; one owner at a time.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "strata/common/status.h"

namespace strata {

class JsonRecord {
 public:
  JsonRecord& Add(std::string_view key, double v);
  JsonRecord& Add(std::string_view key, std::string_view v);
  JsonRecord& Add(std::string_view key, const char* v) { return Add(key, std::string_view(v)); }
  JsonRecord& Add(std::string_view key, bool v);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  JsonRecord& Add(std::string_view key, T v) {
    if constexpr (std::is_signed_v<T>) {
      return AddSigned(key, static_cast<int64_t>(v));
    } else {
      return AddUnsigned(key, static_cast<uint64_t>(v));
    }
  }

  // The object, e.g. {"pass":3,"eval_auc":0.78012345678901234,"stage":"train"}.
  std::string ToString() const { return body_ + "}"; }

 private:
  JsonRecord& AddSigned(std::string_view key, int64_t v);
  JsonRecord& AddUnsigned(std::string_view key, uint64_t v);
  void AddKey(std::string_view key);

  std::string body_ = "{";
};

// Appends s to out as a quoted, escaped JSON string.
void AppendJsonString(std::string_view s, std::string* out);

class JsonlWriter {
 public:
  JsonlWriter() = default;
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  ~JsonlWriter();

  // Creates or truncates path. IOError naming the file when it cannot be opened.
  Status Open(const std::string& path);

  // Appends record and a newline, then flushes. REQUIRES: Open succeeded. IOError naming
  // the file when the write or flush fails.
  Status Write(const JsonRecord& record);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace strata
