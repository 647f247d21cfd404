// libFuzzer target: the checkpoint metadata reader (ckpt::ReadMeta) on meta.h5 files whose
// contents the input chooses. Starting from a valid meta (what an empty input writes), the
// input decides for each field of the format whether it stays valid, goes missing, takes
// another type or another value (vectors of any small length), so the fuzzer explores what
// Strata makes of well-formed HDF5 holding bad metadata: missing fields, wrong types,
// negative counts, tables of the wrong length, impossible model shapes. The bytes of the
// file itself are HDF5's to parse and are not mutated here. ReadMeta must accept or refuse,
// never crash; what it accepts must be self-consistent (the invariants its readers rely
// on), and CheckCompatible must then run on it.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/model/mlp.h"

namespace {

namespace h5 = strata::ckpt::h5;
const std::string kWhere = "fuzz";

// Small values half of the time (they reach the consistency checks), any value otherwise.
template <typename T>
T SomeNumber(FuzzedDataProvider* in) {
  if constexpr (std::is_floating_point_v<T>) {
    return in->ConsumeFloatingPoint<T>();
  } else {
    return in->ConsumeBool() ? static_cast<T>(in->ConsumeIntegralInRange<int>(-2, 40)) : in->ConsumeIntegral<T>();
  }
}

template <typename T>
std::vector<T> SomeVector(FuzzedDataProvider* in) {
  std::vector<T> v(in->ConsumeIntegralInRange<size_t>(0, 40));
  for (T& x : v) x = SomeNumber<T>(in);
  return v;
}

std::string SomeString(FuzzedDataProvider* in) {
  static const char* const kWords[] = {"full", "delta", "adagrad", "sgd", "adam", "", "x"};
  return in->ConsumeBool() ? kWords[in->ConsumeIntegralInRange<size_t>(0, 6)] : in->ConsumeRandomLengthString(64);
}

// Writes the fields of one meta.h5, each as the input decides.
class MetaWriter {
 public:
  explicit MetaWriter(FuzzedDataProvider* in) : in_(in) {}

  template <typename T>
  void Number(hid_t loc, const char* name, hid_t type, T valid) {
    switch (NextFate()) {
      case Fate::kKeep: (void)h5::WriteAttr(loc, name, type, &valid, kWhere); break;
      case Fate::kAbsent: break;
      case Fate::kRetype: Retype(loc, name); break;
      case Fate::kRevalue: { T v = SomeNumber<T>(in_); (void)h5::WriteAttr(loc, name, type, &v, kWhere); break; }
    }
  }
  void String(hid_t loc, const char* name, const std::string& valid) {
    switch (NextFate()) {
      case Fate::kKeep: (void)h5::WriteStringAttr(loc, name, valid, kWhere); break;
      case Fate::kAbsent: break;
      case Fate::kRetype: Retype(loc, name); break;
      case Fate::kRevalue: (void)h5::WriteStringAttr(loc, name, SomeString(in_), kWhere); break;
    }
  }
  void IntArray(hid_t loc, const char* name, const std::vector<int>& valid) {
    switch (NextFate()) {
      case Fate::kKeep: (void)h5::WriteIntArrayAttr(loc, name, valid, kWhere); break;
      case Fate::kAbsent: break;
      case Fate::kRetype: Retype(loc, name); break;
      case Fate::kRevalue: (void)h5::WriteIntArrayAttr(loc, name, SomeVector<int>(in_), kWhere); break;
    }
  }
  template <typename T>
  void Vector(hid_t loc, const char* name, hid_t type, const std::vector<T>& valid) {
    std::vector<T> v;
    switch (NextFate()) {
      case Fate::kKeep: v = valid; break;
      case Fate::kAbsent: return;
      case Fate::kRetype: Retype(loc, name); return;
      case Fate::kRevalue: v = SomeVector<T>(in_); break;
    }
    (void)h5::WriteVector(loc, name, type, v.data(), v.size(), kWhere);
  }

 private:
  enum class Fate { kKeep, kAbsent, kRetype, kRevalue };

  Fate NextFate() {
    const int c = in_->ConsumeIntegralInRange<int>(0, 15);
    return c < 12 ? Fate::kKeep : c == 12 ? Fate::kAbsent : c == 13 ? Fate::kRetype : Fate::kRevalue;
  }

  // The field as an attribute or dataset of some other type.
  void Retype(hid_t loc, const char* name) {
    switch (in_->ConsumeIntegralInRange<int>(0, 4)) {
      case 0: { int64_t v = SomeNumber<int64_t>(in_); (void)h5::WriteAttr(loc, name, H5T_NATIVE_INT64, &v, kWhere); break; }
      case 1: { double v = SomeNumber<double>(in_); (void)h5::WriteAttr(loc, name, H5T_NATIVE_DOUBLE, &v, kWhere); break; }
      case 2: (void)h5::WriteStringAttr(loc, name, SomeString(in_), kWhere); break;
      case 3: (void)h5::WriteIntArrayAttr(loc, name, SomeVector<int>(in_), kWhere); break;
      default: {
        const std::vector<uint64_t> v = SomeVector<uint64_t>(in_);
        (void)h5::WriteVector(loc, name, H5T_NATIVE_UINT64, v.data(), v.size(), kWhere);
      }
    }
  }

  FuzzedDataProvider* in_;
};

// A small valid model: 2 slots of width 2, 1 dense feature, one hidden layer of 3.
strata::ckpt::CheckpointMeta ValidMeta() {
  strata::ckpt::CheckpointMeta m;
  m.model.num_slots = 2;
  m.model.num_dense = 1;
  m.model.embedding_dim = 2;
  m.model.mlp = {3};
  m.model.mean_slots = {1};
  m.progress = {3, 1, 300, 30};
  m.ranks = 2;
  m.workers = 2;
  m.data_position = {10, 20};
  const size_t params = strata::Mlp(m.model).num_params();
  m.dense.steps = 30;
  m.dense.params.assign(params, 0.5f);
  m.dense.m.assign(params, 0.1f);
  m.dense.v.assign(params, 0.2f);
  m.rank_files = {{3, 1}, {4, 2}};
  return m;
}

// A group, unless a root field of a wrong type took its name (a dataset "ranks").
h5::Handle Group(hid_t file, const char* name) {
  h5::Handle g;
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) (void)h5::CreateGroup(file, name, kWhere, &g);
  return g;
}

void WriteModel(hid_t file, const strata::ModelSpec& s, MetaWriter* w) {
  h5::Handle g = Group(file, "model");
  if (!g.valid()) return;
  w->Number(g.get(), "num_slots", H5T_NATIVE_INT, s.num_slots);
  w->Number(g.get(), "num_dense", H5T_NATIVE_INT, s.num_dense);
  w->Number(g.get(), "embedding_dim", H5T_NATIVE_INT, s.embedding_dim);
  w->IntArray(g.get(), "mlp", s.mlp);
  w->IntArray(g.get(), "mean_slots", s.mean_slots);
  w->String(g.get(), "sparse_optimizer", "adagrad");
  w->String(g.get(), "dense_optimizer", "adam");
  w->Number(g.get(), "lr_sparse", H5T_NATIVE_FLOAT, s.lr_sparse);
  w->Number(g.get(), "lr_dense", H5T_NATIVE_FLOAT, s.lr_dense);
  w->Number(g.get(), "adagrad_init", H5T_NATIVE_FLOAT, s.adagrad_initial_accumulator);
  w->Number(g.get(), "init_scale", H5T_NATIVE_FLOAT, s.init_scale);
  w->Number(g.get(), "seed", H5T_NATIVE_UINT64, s.seed);
}

void WriteTables(hid_t file, const strata::ckpt::CheckpointMeta& m, MetaWriter* w) {
  if (h5::Handle g = Group(file, "progress"); g.valid()) {
    w->Vector(g.get(), "data_position", H5T_NATIVE_UINT64, m.data_position);
  }
  if (h5::Handle g = Group(file, "dense"); g.valid()) {
    w->Number(g.get(), "steps", H5T_NATIVE_INT64, m.dense.steps);
    w->Vector(g.get(), "params", H5T_NATIVE_FLOAT, m.dense.params);
    w->Vector(g.get(), "m", H5T_NATIVE_FLOAT, m.dense.m);
    w->Vector(g.get(), "v", H5T_NATIVE_FLOAT, m.dense.v);
  }
  if (h5::Handle g = Group(file, "ranks"); g.valid()) {
    w->Vector(g.get(), "rows", H5T_NATIVE_UINT64, std::vector<uint64_t>{m.rank_files[0].rows, m.rank_files[1].rows});
    w->Vector(g.get(), "crc32", H5T_NATIVE_UINT32, std::vector<uint32_t>{m.rank_files[0].crc32, m.rank_files[1].crc32});
  }
}

void WriteMetaFile(const std::string& path, FuzzedDataProvider* in) {
  const strata::ckpt::CheckpointMeta m = ValidMeta();
  MetaWriter w(in);
  h5::Handle file;
  if (!h5::CreateFile(path, &file).ok()) std::abort();
  const hid_t f = file.get();
  w.Number(f, "format_version", H5T_NATIVE_INT, m.format_version);
  w.String(f, "kind", "full");
  w.String(f, "flags", "--fuzz");
  w.String(f, "train_input", "1 file, 10 lines, id 0");
  w.Number(f, "pass", H5T_NATIVE_INT64, m.progress.pass);
  w.Number(f, "epoch", H5T_NATIVE_INT64, m.progress.epoch);
  w.Number(f, "examples", H5T_NATIVE_INT64, m.progress.examples);
  w.Number(f, "global_step", H5T_NATIVE_INT64, m.progress.global_step);
  w.Number(f, "ranks", H5T_NATIVE_INT, m.ranks);
  w.Number(f, "workers", H5T_NATIVE_INT, m.workers);
  w.Number(f, "base_pass", H5T_NATIVE_INT64, m.base_pass);
  w.Number(f, "min_last_pass", H5T_NATIVE_UINT32, m.min_last_pass);
  WriteModel(f, m.model, &w);
  WriteTables(f, m, &w);
  if (!file.Close(path).ok()) std::abort();
}

// What every reader of an accepted meta relies on.
bool Consistent(const strata::ckpt::CheckpointMeta& m) {
  const size_t params = strata::Mlp(m.model).num_params();
  return m.ranks >= 1 && m.workers >= 1 && m.rank_files.size() == static_cast<size_t>(m.ranks) &&
         m.data_position.size() == static_cast<size_t>(m.workers) && m.model.embedding_dim >= 1 &&
         m.model.embedding_dim <= strata::kMaxEmbeddingDim && m.model.num_slots >= 1 && m.model.num_dense >= 0 &&
         m.dense.params.size() == params && (m.dense.m.empty() || m.dense.m.size() == params) &&
         (m.dense.v.empty() || m.dense.v.size() == params) &&
         std::all_of(m.model.mean_slots.begin(), m.model.mean_slots.end(),
                     [&](int s) { return s >= 0 && s < m.model.num_slots; });
}

std::string ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/strata-meta-fuzz-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = ScratchDir();
  h5::SilenceErrors();
  FuzzedDataProvider in(data, size);
  WriteMetaFile(dir + "/" + strata::ckpt::kMetaFileName, &in);
  strata::ckpt::CheckpointMeta meta;
  if (strata::ckpt::ReadMeta(dir, &meta).ok()) {
    if (!Consistent(meta)) __builtin_trap();
    (void)strata::ckpt::CheckCompatible(meta, strata::ModelSpec());
  }
  return 0;
}
