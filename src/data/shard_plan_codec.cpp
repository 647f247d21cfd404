// ShardPlan's wire form (see the layout in shard_plan.h) and its small accessors.
#include "strata/data/shard_plan.h"

#include <cstring>
#include <type_traits>

namespace strata {
namespace {

constexpr char kMagic[4] = {'S', 'S', 'P', 'L'};
constexpr uint32_t kVersion = 3;

class Writer {
 public:
  template <typename T>
  void Put(T v) {
    static_assert(std::is_integral_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void PutBytes(const std::string& s) {
    Put(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Bounds-checked cursor; any short read latches `ok() == false`.
class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T Get() {
    T v{};
    if (!Has(sizeof(T))) return v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string GetBytes() {
    uint32_t n = Get<uint32_t>();
    if (!Has(n)) return {};
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool Has(size_t n) {
    if (ok_ && in_.size() - pos_ >= n) return true;
    ok_ = false;
    return false;
  }
  const std::string& in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Status Bad(const std::string& what) { return Status::Corruption("shard plan: " + what); }

Status ReadFileEntry(Reader* r, InputFile* f) {
  f->path = r->GetBytes();
  const uint8_t encoding = r->Get<uint8_t>();
  if (encoding > static_cast<uint8_t>(FileEncoding::kParquet)) return Bad("unknown file encoding");
  f->encoding = static_cast<FileEncoding>(encoding);
  f->lines = r->Get<uint64_t>();
  f->bytes = r->Get<uint64_t>();
  return Status::OK();
}

Status CheckPiece(const ShardPiece& p, const std::vector<InputFile>& files) {
  if (p.file >= files.size()) return Bad("piece names file " + std::to_string(p.file));
  const InputFile& f = files[p.file];
  if (p.num_lines == 0 || p.first_line + p.num_lines > f.lines || p.begin_byte > p.end_byte ||
      p.end_byte > f.bytes) {
    return Bad("piece out of range in " + f.path);
  }
  return Status::OK();
}

// One worker's pieces, each checked against the files; adds their lines to *covered. A short
// read stops it early and leaves r->ok() false.
Status ReadChunk(Reader* r, const std::vector<InputFile>& files, std::vector<ShardPiece>* chunk, uint64_t* covered) {
  const uint32_t num_pieces = r->Get<uint32_t>();
  for (uint32_t i = 0; i < num_pieces && r->ok(); ++i) {
    ShardPiece p;
    p.file = r->Get<uint32_t>();
    p.first_line = r->Get<uint64_t>();
    p.num_lines = r->Get<uint64_t>();
    p.begin_byte = r->Get<uint64_t>();
    p.end_byte = r->Get<uint64_t>();
    if (!r->ok()) break;
    STRATA_RETURN_IF_ERROR(CheckPiece(p, files));
    *covered += p.num_lines;
    chunk->push_back(p);
  }
  return Status::OK();
}

}  // namespace

uint64_t ShardPlan::chunk_lines(int worker) const {
  uint64_t n = 0;
  for (const ShardPiece& p : chunks_[static_cast<size_t>(worker)]) n += p.num_lines;
  return n;
}

std::string ShardPlan::Serialize() const {
  Writer w;
  for (char c : kMagic) w.Put(c);
  w.Put(kVersion);
  w.Put(stripe_lines_);
  w.Put(static_cast<uint32_t>(files_.size()));
  for (const InputFile& f : files_) {
    w.PutBytes(f.path);
    w.Put(static_cast<uint8_t>(f.encoding));
    w.Put(f.lines);
    w.Put(f.bytes);
  }
  w.Put(static_cast<uint32_t>(chunks_.size()));
  for (const std::vector<ShardPiece>& chunk : chunks_) {
    w.Put(static_cast<uint32_t>(chunk.size()));
    for (const ShardPiece& p : chunk) {
      w.Put(p.file);
      w.Put(p.first_line);
      w.Put(p.num_lines);
      w.Put(p.begin_byte);
      w.Put(p.end_byte);
    }
  }
  return w.Take();
}

Status ShardPlan::Deserialize(const std::string& bytes, ShardPlan* out) {
  Reader r(bytes);
  for (char c : kMagic) {
    if (r.Get<char>() != c) return Bad("bad magic");
  }
  if (r.Get<uint32_t>() != kVersion) return Bad("unknown version");
  ShardPlan plan;
  plan.stripe_lines_ = r.Get<uint64_t>();  // 0: whole files
  const uint32_t num_files = r.Get<uint32_t>();
  for (uint32_t i = 0; i < num_files && r.ok(); ++i) {
    InputFile f;
    STRATA_RETURN_IF_ERROR(ReadFileEntry(&r, &f));
    plan.total_lines_ += f.lines;
    plan.files_.push_back(std::move(f));
  }
  const uint32_t num_workers = r.Get<uint32_t>();
  if (!r.ok() || num_workers == 0) return Bad("truncated header");
  uint64_t covered = 0;
  for (uint32_t w = 0; w < num_workers && r.ok(); ++w) {
    STRATA_RETURN_IF_ERROR(ReadChunk(&r, plan.files_, &plan.chunks_.emplace_back(), &covered));
  }
  if (!r.ok() || !r.at_end()) return Bad("truncated or oversized");
  if (covered != plan.total_lines_) return Bad("pieces do not cover the input");
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace strata
