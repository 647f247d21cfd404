// JSON-lines records and writer: std::to_chars for numbers (17 significant digits for
// doubles, exact for integers), RFC 8259 escaping for strings, stdio with a flush per line.
#include "strata/metrics/jsonl.h"

#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>

namespace strata {

namespace {

template <typename T, typename... Fmt>
void AppendChars(std::string* out, T v, Fmt... fmt) {
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, fmt...);
  out->append(buf, res.ptr);
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(ch);  // UTF-8 bytes pass through unchanged
        }
    }
  }
  out->push_back('"');
}

void JsonRecord::AddKey(std::string_view key) {
  if (body_.size() > 1) body_.push_back(',');
  AppendJsonString(key, &body_);
  body_.push_back(':');
}

JsonRecord& JsonRecord::Add(std::string_view key, double v) {
  AddKey(key);
  if (std::isfinite(v)) {
    AppendChars(&body_, v, std::chars_format::general, 17);
  } else {
    body_.append("null");
  }
  return *this;
}

JsonRecord& JsonRecord::Add(std::string_view key, std::string_view v) {
  AddKey(key);
  AppendJsonString(v, &body_);
  return *this;
}

JsonRecord& JsonRecord::Add(std::string_view key, bool v) {
  AddKey(key);
  body_.append(v ? "true" : "false");
  return *this;
}

JsonRecord& JsonRecord::AddSigned(std::string_view key, int64_t v) {
  AddKey(key);
  AppendChars(&body_, v);
  return *this;
}

JsonRecord& JsonRecord::AddUnsigned(std::string_view key, uint64_t v) {
  AddKey(key);
  AppendChars(&body_, v);
  return *this;
}

JsonlWriter::~JsonlWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status JsonlWriter::Open(const std::string& path) {
  if (file_ != nullptr) std::fclose(file_);
  path_ = path;
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) return ErrnoStatus("cannot open metrics file " + path, errno);
  return Status::OK();
}

Status JsonlWriter::Write(const JsonRecord& record) {
  assert(file_ != nullptr);
  const std::string line = record.ToString() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return ErrnoStatus("cannot write metrics file " + path_, errno);
  }
  return Status::OK();
}

}  // namespace strata
