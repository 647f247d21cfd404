// meta.h5: writing, reading and the resume compatibility check (layout in ckpt/format.h).
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "ckpt/file_sync.h"
#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/model/dense_model.h"
#include "strata/ps/admission.h"

namespace strata::ckpt {
namespace {

// FTRL's attrs of /model, with the fields they hold (optional on read: older files lack them).
template <typename Spec>
auto FtrlAttrs(Spec* m) {
  return std::array{std::pair{"ftrl_l1", &m->ftrl_l1}, std::pair{"ftrl_l2", &m->ftrl_l2},
                    std::pair{"ftrl_beta", &m->ftrl_beta}};
}

std::string Widths(const std::vector<int>& mlp) {
  std::string s;
  for (int w : mlp) {
    if (!s.empty()) s += ',';
    s += std::to_string(w);
  }
  return s.empty() ? "(none)" : s;
}

Status WriteModel(hid_t file, const ModelSpec& m, const std::string& where) {
  h5::Handle g;
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file, "model", where, &g));
  const std::string w = where + ": /model";
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(g.get(), "model", ModelKindName(m.kind), w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "num_slots", H5T_NATIVE_INT, &m.num_slots, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "num_dense", H5T_NATIVE_INT, &m.num_dense, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "embedding_dim", H5T_NATIVE_INT, &m.embedding_dim, w));
  STRATA_RETURN_IF_ERROR(h5::WriteIntArrayAttr(g.get(), "mlp", m.mlp, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "cross_layers", H5T_NATIVE_INT, &m.cross_layers, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "cross_rank", H5T_NATIVE_INT, &m.cross_rank, w));
  STRATA_RETURN_IF_ERROR(h5::WriteIntArrayAttr(g.get(), "bottom_mlp", m.bottom_mlp, w));
  STRATA_RETURN_IF_ERROR(h5::WriteIntArrayAttr(g.get(), "mean_slots", m.mean_slots, w));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(g.get(), "sparse_optimizer", SparseOptimizerName(m.sparse_optimizer), w));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(g.get(), "dense_optimizer", DenseOptimizerName(m.dense_optimizer), w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "lr_sparse", H5T_NATIVE_FLOAT, &m.lr_sparse, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "lr_dense", H5T_NATIVE_FLOAT, &m.lr_dense, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "adagrad_init", H5T_NATIVE_FLOAT, &m.adagrad_initial_accumulator, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "init_scale", H5T_NATIVE_FLOAT, &m.init_scale, w));
  for (const auto& [name, value] : FtrlAttrs(&m)) STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), name, H5T_NATIVE_FLOAT, value, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "admit_min_count", H5T_NATIVE_INT, &m.admit_min_count, w));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(g.get(), "evict_unseen_passes", H5T_NATIVE_INT, &m.evict_unseen_passes, w));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(g.get(), "row_dtype", RowDtypeName(m.row_dtype), w));
  return h5::WriteAttr(g.get(), "seed", H5T_NATIVE_UINT64, &m.seed, w);
}

// The MLP's widths and the mean-pooled slots of CheckModelShape.
Status CheckLayers(const ModelSpec& m, const std::string& where) {
  for (int width : m.mlp) {
    if (width < 1) return Status::Corruption(where + ": mlp width " + std::to_string(width));
  }
  for (int width : m.bottom_mlp) {
    if (width < 1) return Status::Corruption(where + ": bottom_mlp width " + std::to_string(width));
  }
  for (size_t i = 0; i < m.mean_slots.size(); ++i) {
    const int s = m.mean_slots[i];
    if (s < 0 || s >= m.num_slots || (i > 0 && s <= m.mean_slots[i - 1])) {
      return Status::Corruption(where + ": mean_slots entry " + std::to_string(s));
    }
  }
  return Status::OK();
}

// A model whose shape no build could have written (and whose sizes would overflow the
// arithmetic of its readers) is corruption, not a model.
Status CheckModelShape(const ModelSpec& m, const std::string& where) {
  constexpr int kMaxColumns = 1 << 16;
  auto bad = [&](const std::string& what) { return Status::Corruption(where + ": " + what); };
  if (m.embedding_dim < 1 || m.embedding_dim > kMaxEmbeddingDim) return bad("embedding_dim " + std::to_string(m.embedding_dim));
  if (m.row_dtype != RowDtype::kFp32 && m.row_dim() % 2 != 0) return bad("16-bit rows of an odd width");
  if (m.num_slots < 1 || m.num_slots > kMaxColumns) return bad("num_slots " + std::to_string(m.num_slots));
  if (m.num_dense < 0 || m.num_dense > kMaxColumns) return bad("num_dense " + std::to_string(m.num_dense));
  if (m.admit_min_count < 0 || m.admit_min_count > kMaxAdmitMinCount) return bad("admit_min_count " + std::to_string(m.admit_min_count));
  if (m.cross_layers < 1 || m.cross_layers > kMaxCrossLayers) return bad("cross_layers " + std::to_string(m.cross_layers));
  if (m.cross_rank < 0 || m.cross_rank > kMaxColumns * kMaxEmbeddingDim) return bad("cross_rank " + std::to_string(m.cross_rank));
  return CheckLayers(m, where);
}

// /model's "model" (absent in older files: dnn, the only model then).
Status ReadModelKind(hid_t g, const std::string& w, ModelSpec* m) {
  if (!h5::HasAttr(g, "model")) return Status::OK();
  std::string name;
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(g, "model", w, &name));
  for (ModelKind k : {ModelKind::kDnn, ModelKind::kDeepFm, ModelKind::kDcn, ModelKind::kDlrm, ModelKind::kWdl}) {
    if (name == ModelKindName(k)) {
      m->kind = k;
      return Status::OK();
    }
  }
  return Status::Corruption(w + ": unknown model '" + name + "'");
}

// The attrs of /model that older files lack (their defaults then hold).
Status ReadOptionalModelAttrs(hid_t g, const std::string& w, ModelSpec* m) {
  if (h5::HasAttr(g, "mean_slots")) STRATA_RETURN_IF_ERROR(h5::ReadIntArrayAttr(g, "mean_slots", w, &m->mean_slots));
  if (h5::HasAttr(g, "bottom_mlp")) STRATA_RETURN_IF_ERROR(h5::ReadIntArrayAttr(g, "bottom_mlp", w, &m->bottom_mlp));
  for (const auto& [name, value] : FtrlAttrs(m)) {
    if (h5::HasAttr(g, name)) STRATA_RETURN_IF_ERROR(h5::ReadAttr(g, name, H5T_NATIVE_FLOAT, value, w));
  }
  for (const auto& [name, value] : {std::pair{"admit_min_count", &m->admit_min_count},
                                    std::pair{"evict_unseen_passes", &m->evict_unseen_passes},
                                    std::pair{"cross_layers", &m->cross_layers}, std::pair{"cross_rank", &m->cross_rank}}) {
    if (h5::HasAttr(g, name)) STRATA_RETURN_IF_ERROR(h5::ReadAttr(g, name, H5T_NATIVE_INT, value, w));
  }
  STRATA_RETURN_IF_ERROR(ReadModelKind(g, w, m));
  if (!h5::HasAttr(g, "row_dtype")) return Status::OK();
  std::string dtype;
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(g, "row_dtype", w, &dtype));
  for (RowDtype t : {RowDtype::kFp32, RowDtype::kBf16, RowDtype::kFp16}) {
    if (dtype == RowDtypeName(t)) {
      m->row_dtype = t;
      return Status::OK();
    }
  }
  return Status::Corruption(w + ": unknown row_dtype '" + dtype + "'");
}

Status ReadModel(hid_t file, const std::string& where, ModelSpec* m) {
  h5::Handle g;
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file, "model", where, &g));
  const std::string w = where + ": /model";
  std::string sparse, dense;
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "num_slots", H5T_NATIVE_INT, &m->num_slots, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "num_dense", H5T_NATIVE_INT, &m->num_dense, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "embedding_dim", H5T_NATIVE_INT, &m->embedding_dim, w));
  STRATA_RETURN_IF_ERROR(h5::ReadIntArrayAttr(g.get(), "mlp", w, &m->mlp));
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(g.get(), "sparse_optimizer", w, &sparse));
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(g.get(), "dense_optimizer", w, &dense));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "lr_sparse", H5T_NATIVE_FLOAT, &m->lr_sparse, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "lr_dense", H5T_NATIVE_FLOAT, &m->lr_dense, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "adagrad_init", H5T_NATIVE_FLOAT, &m->adagrad_initial_accumulator, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "init_scale", H5T_NATIVE_FLOAT, &m->init_scale, w));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(g.get(), "seed", H5T_NATIVE_UINT64, &m->seed, w));
  STRATA_RETURN_IF_ERROR(ReadOptionalModelAttrs(g.get(), w, m));
  bool known = false;
  for (SparseOptimizerKind k : {SparseOptimizerKind::kAdagrad, SparseOptimizerKind::kSgd, SparseOptimizerKind::kRowwiseAdagrad,
                                SparseOptimizerKind::kAdam, SparseOptimizerKind::kFtrl}) {
    if (sparse == SparseOptimizerName(k)) m->sparse_optimizer = k, known = true;
  }
  if (!known) return Status::Corruption(w + ": unknown sparse_optimizer '" + sparse + "'");
  if (dense != "adam" && dense != "sgd") return Status::Corruption(w + ": unknown dense_optimizer '" + dense + "'");
  m->dense_optimizer = dense == "adam" ? DenseOptimizerKind::kAdam : DenseOptimizerKind::kSgd;
  return CheckModelShape(*m, w);
}

// The group at `path` under loc ("layers/0"), made with the groups above it when missing.
Status GroupAt(hid_t loc, const std::string& path, const std::string& where, h5::Handle* group) {
  h5::Handle parent;
  hid_t at = loc;
  size_t begin = 0;
  for (;;) {
    const size_t slash = path.find('/', begin);
    const std::string name = path.substr(begin, slash == std::string::npos ? std::string::npos : slash - begin);
    h5::Handle next;
    if (H5Lexists(at, name.c_str(), H5P_DEFAULT) > 0) {
      STRATA_RETURN_IF_ERROR(h5::OpenGroup(at, name, where, &next));
    } else {
      STRATA_RETURN_IF_ERROR(h5::CreateGroup(at, name, where, &next));
    }
    if (slash == std::string::npos) {
      *group = std::move(next);
      return Status::OK();
    }
    parent = std::move(next);
    at = parent.get();
    begin = slash + 1;
  }
}

// /dense/<block>: params cut into the model's tensors (DenseModel::Blocks), with their
// shapes: /dense/layers/<l>/{weight (in, out), bias} and, for dcn, /dense/cross/<l>/....
// Metadata that ReadMeta would refuse (tests write such files) gets no tensor view.
Status WriteLayers(hid_t dense, const CheckpointMeta& meta, const std::string& where) {
  if (!CheckModelShape(meta.model, where).ok()) return Status::OK();
  const DenseModel model(meta.model);
  if (meta.dense.params.size() != model.num_params()) return Status::OK();
  for (const ParamBlock& block : model.Blocks()) {
    const size_t slash = block.name.rfind('/');
    const std::string w = where + ": /dense/" + block.name;
    h5::Handle group;
    STRATA_RETURN_IF_ERROR(GroupAt(dense, block.name.substr(0, slash), where, &group));
    const std::string name = block.name.substr(slash + 1);
    const float* values = meta.dense.params.data() + block.offset;
    if (block.rows == 0) {
      STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), name, H5T_NATIVE_FLOAT, values, block.cols, w));
      continue;
    }
    h5::Dataset matrix;
    STRATA_RETURN_IF_ERROR(h5::Dataset::Create(group.get(), name, H5T_NATIVE_FLOAT, block.cols, block.rows,
                                               h5::ChunkCheck::kFletcher32, w, &matrix));
    STRATA_RETURN_IF_ERROR(matrix.Append(values, block.rows));
  }
  return Status::OK();
}

Status WriteTables(hid_t file, const CheckpointMeta& meta, const std::string& where) {
  h5::Handle progress, dense, ranks;
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file, "progress", where, &progress));
  STRATA_RETURN_IF_ERROR(h5::WriteVector(progress.get(), "data_position", H5T_NATIVE_UINT64, meta.data_position.data(),
                                         meta.data_position.size(), where + ": /progress/data_position"));
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file, "dense", where, &dense));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(dense.get(), "steps", H5T_NATIVE_INT64, &meta.dense.steps, where + ": /dense"));
  const std::pair<const char*, const std::vector<float>*> vecs[] = {
      {"params", &meta.dense.params}, {"m", &meta.dense.m}, {"v", &meta.dense.v}};
  for (const auto& [name, v] : vecs) {
    STRATA_RETURN_IF_ERROR(h5::WriteVector(dense.get(), name, H5T_NATIVE_FLOAT, v->data(), v->size(),
                                           where + ": /dense/" + name));
  }
  STRATA_RETURN_IF_ERROR(WriteLayers(dense.get(), meta, where));
  std::vector<uint64_t> rows;
  std::vector<uint32_t> crcs;
  for (const RankFileInfo& f : meta.rank_files) {
    rows.push_back(f.rows);
    crcs.push_back(f.crc32);
  }
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file, "ranks", where, &ranks));
  STRATA_RETURN_IF_ERROR(h5::WriteVector(ranks.get(), "rows", H5T_NATIVE_UINT64, rows.data(), rows.size(), where + ": /ranks/rows"));
  return h5::WriteVector(ranks.get(), "crc32", H5T_NATIVE_UINT32, crcs.data(), crcs.size(), where + ": /ranks/crc32");
}

// The dense vectors hold the model's parameters; Adam's moments as many, or none (sgd).
Status CheckDenseSizes(const CheckpointMeta& meta, const std::string& where) {
  const size_t params = DenseModel(meta.model).num_params();
  if (meta.dense.params.size() != params) {
    return Status::Corruption(where + ": /dense/params has " + std::to_string(meta.dense.params.size()) +
                              " values, the model in /model has " + std::to_string(params) + " parameters");
  }
  for (const auto& [name, v] : {std::pair{"m", &meta.dense.m}, std::pair{"v", &meta.dense.v}}) {
    if (!v->empty() && v->size() != params) {
      return Status::Corruption(where + ": /dense/" + name + " has " + std::to_string(v->size()) + " values for " +
                                std::to_string(params) + " parameters");
    }
  }
  return Status::OK();
}

Status ReadTables(hid_t file, const std::string& where, CheckpointMeta* meta) {
  h5::Handle progress, dense, ranks;
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file, "progress", where, &progress));
  STRATA_RETURN_IF_ERROR(h5::ReadVector(progress.get(), "data_position", H5T_NATIVE_UINT64,
                                        where + ": /progress/data_position", &meta->data_position));
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file, "dense", where, &dense));
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(dense.get(), "steps", H5T_NATIVE_INT64, &meta->dense.steps, where + ": /dense"));
  const std::pair<const char*, std::vector<float>*> vecs[] = {
      {"params", &meta->dense.params}, {"m", &meta->dense.m}, {"v", &meta->dense.v}};
  for (const auto& [name, v] : vecs) {
    STRATA_RETURN_IF_ERROR(h5::ReadVector(dense.get(), name, H5T_NATIVE_FLOAT, where + ": /dense/" + name, v));
  }
  std::vector<uint64_t> rows;
  std::vector<uint32_t> crcs;
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file, "ranks", where, &ranks));
  STRATA_RETURN_IF_ERROR(h5::ReadVector(ranks.get(), "rows", H5T_NATIVE_UINT64, where + ": /ranks/rows", &rows));
  STRATA_RETURN_IF_ERROR(h5::ReadVector(ranks.get(), "crc32", H5T_NATIVE_UINT32, where + ": /ranks/crc32", &crcs));
  if (rows.size() != static_cast<size_t>(meta->ranks) || crcs.size() != rows.size()) {
    return Status::Corruption(where + ": /ranks has " + std::to_string(rows.size()) + " entries for " +
                              std::to_string(meta->ranks) + " ranks");
  }
  meta->rank_files.resize(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) meta->rank_files[r] = {rows[r], crcs[r]};
  if (meta->data_position.size() != static_cast<size_t>(meta->workers)) {
    return Status::Corruption(where + ": /progress/data_position has " + std::to_string(meta->data_position.size()) +
                              " entries for " + std::to_string(meta->workers) + " workers");
  }
  return CheckDenseSizes(*meta, where);
}

// Which root attributes hold which fields: one table for writing and reading.
struct RootField {
  const char* name;
  hid_t type;
  void* value;
};

std::vector<RootField> RootFields(CheckpointMeta* m) {
  return {{"pass", H5T_NATIVE_INT64, &m->progress.pass},
          {"epoch", H5T_NATIVE_INT64, &m->progress.epoch},
          {"examples", H5T_NATIVE_INT64, &m->progress.examples},
          {"global_step", H5T_NATIVE_INT64, &m->progress.global_step},
          {"ranks", H5T_NATIVE_INT, &m->ranks},         {"workers", H5T_NATIVE_INT, &m->workers},
          {"base_pass", H5T_NATIVE_INT64, &m->base_pass}, {"min_last_pass", H5T_NATIVE_UINT32, &m->min_last_pass}};
}

}  // namespace

Status WriteMeta(const std::string& ckpt_tmp_dir, const CheckpointMeta& meta) {
  const std::string path = ckpt_tmp_dir + "/" + kMetaFileName;
  if (meta.ranks < 1 || meta.rank_files.size() != static_cast<size_t>(meta.ranks) ||
      meta.data_position.size() != static_cast<size_t>(meta.workers)) {
    return Status::InvalidArgument(path + ": meta needs one rank file entry per rank and one data position per worker");
  }
  std::error_code ec;
  std::filesystem::create_directories(ckpt_tmp_dir, ec);
  if (ec) return Status::IOError("cannot create " + ckpt_tmp_dir + ": " + ec.message());
  h5::Handle file;
  STRATA_RETURN_IF_ERROR(h5::CreateFile(path, &file));
  CheckpointMeta copy = meta;  // RootFields points into a mutable struct
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(file.get(), "format_version", H5T_NATIVE_INT, &copy.format_version, path));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(file.get(), "kind", KindName(meta.kind), path));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(file.get(), "flags", meta.flags, path));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(file.get(), "train_input", meta.train_input, path));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(file.get(), "input_schema", meta.input_schema, path));
  STRATA_RETURN_IF_ERROR(h5::WriteStringAttr(file.get(), "slot_names", meta.slot_names, path));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(file.get(), "batch_size", H5T_NATIVE_INT, &copy.batch_size, path));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(file.get(), "rows_evicted", H5T_NATIVE_INT64, &copy.progress.rows_evicted, path));
  for (const RootField& f : RootFields(&copy)) {
    STRATA_RETURN_IF_ERROR(h5::WriteAttr(file.get(), f.name, f.type, f.value, path));
  }
  STRATA_RETURN_IF_ERROR(WriteModel(file.get(), meta.model, path));
  STRATA_RETURN_IF_ERROR(WriteTables(file.get(), meta, path));
  STRATA_RETURN_IF_ERROR(file.Close(path));
  STRATA_RETURN_IF_ERROR(SyncPath(path));
  for (int r = meta.ranks;; ++r) {  // rank files of an earlier, wider attempt at this name
    std::filesystem::remove(ckpt_tmp_dir + "/" + PendingFileName(r), ec);
    std::filesystem::remove(ckpt_tmp_dir + "/" + DeletedFileName(r), ec);
    if (!std::filesystem::remove(ckpt_tmp_dir + "/" + RankFileName(r), ec)) break;
  }
  return SyncDir(ckpt_tmp_dir);
}

Status ReadMeta(const std::string& ckpt_path, CheckpointMeta* meta) {
  const std::string path = ckpt_path + "/" + kMetaFileName;
  h5::Handle file;
  STRATA_RETURN_IF_ERROR(h5::OpenFileReadOnly(path, &file));
  *meta = CheckpointMeta();
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(file.get(), "format_version", H5T_NATIVE_INT, &meta->format_version, path));
  if (meta->format_version != kFormatVersion) {
    return Status::Corruption(path + ": format version " + std::to_string(meta->format_version) +
                              ", this build reads " + std::to_string(kFormatVersion));
  }
  std::string kind;
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(file.get(), "kind", path, &kind));
  bool known = false;
  for (Kind k : {Kind::kFull, Kind::kDelta, Kind::kIncrement}) {
    if (kind == KindName(k)) meta->kind = k, known = true;
  }
  if (!known) return Status::Corruption(path + ": unknown kind '" + kind + "'");
  STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(file.get(), "flags", path, &meta->flags));
  for (const auto& [name, value] : {std::pair{"train_input", &meta->train_input},
                                    std::pair{"input_schema", &meta->input_schema},
                                    std::pair{"slot_names", &meta->slot_names}}) {
    if (h5::HasAttr(file.get(), name)) STRATA_RETURN_IF_ERROR(h5::ReadStringAttr(file.get(), name, path, value));
  }
  if (h5::HasAttr(file.get(), "batch_size")) {
    STRATA_RETURN_IF_ERROR(h5::ReadAttr(file.get(), "batch_size", H5T_NATIVE_INT, &meta->batch_size, path));
    if (meta->batch_size < 0) return Status::Corruption(path + ": batch_size " + std::to_string(meta->batch_size));
  }
  if (h5::HasAttr(file.get(), "rows_evicted")) {
    STRATA_RETURN_IF_ERROR(h5::ReadAttr(file.get(), "rows_evicted", H5T_NATIVE_INT64, &meta->progress.rows_evicted, path));
  }
  for (const RootField& f : RootFields(meta)) {
    STRATA_RETURN_IF_ERROR(h5::ReadAttr(file.get(), f.name, f.type, f.value, path));
  }
  if (meta->ranks < 1 || meta->workers < 1) {
    return Status::Corruption(path + ": ranks " + std::to_string(meta->ranks) + ", workers " + std::to_string(meta->workers));
  }
  STRATA_RETURN_IF_ERROR(ReadModel(file.get(), path, &meta->model));
  return ReadTables(file.get(), path, meta);
}

namespace {

// A setting a resume must keep: its flag, its value in the checkpoint and now, as text;
// `applies` is false where the model does not use it.
struct ResumeField {
  const char* flag;
  std::string then, now;
  bool applies = true;
};

std::vector<ResumeField> ResumeFields(const ModelSpec& c, const ModelSpec& s) {
  using std::to_string;
  return {
      {"--model", ModelKindName(c.kind), ModelKindName(s.kind)},
      {"--cross-layers", to_string(c.cross_layers), to_string(s.cross_layers), s.kind == ModelKind::kDcn},
      {"--cross-rank", to_string(c.cross_rank), to_string(s.cross_rank), s.kind == ModelKind::kDcn},
      {"--bottom-mlp", Widths(c.bottom_mlp), Widths(s.bottom_mlp), s.kind == ModelKind::kDlrm},
      {"slots (--format or --schema)", to_string(c.num_slots), to_string(s.num_slots)},
      {"dense features (--format or --schema)", to_string(c.num_dense), to_string(s.num_dense)},
      {"--seed", to_string(c.seed), to_string(s.seed)},
      {"--embedding-dim", to_string(c.embedding_dim), to_string(s.embedding_dim)},
      {"--mlp", Widths(c.mlp), Widths(s.mlp)},
      {"mean-pooled slots (--schema)", Widths(c.mean_slots), Widths(s.mean_slots)},
      {"--row-dtype", RowDtypeName(c.row_dtype), RowDtypeName(s.row_dtype)},
      {"--sparse-optimizer", SparseOptimizerName(c.sparse_optimizer), SparseOptimizerName(s.sparse_optimizer)},
      {"--dense-optimizer", DenseOptimizerName(c.dense_optimizer), DenseOptimizerName(s.dense_optimizer)},
  };
}

}  // namespace

Status CheckCompatible(const CheckpointMeta& meta, const ModelSpec& spec) {
  if (meta.kind == Kind::kDelta) return Status::InvalidArgument("cannot resume from a delta export; name a checkpoint");
  for (const ResumeField& f : ResumeFields(meta.model, spec)) {
    if (f.applies && f.then != f.now) {
      return Status::InvalidArgument("cannot resume: " + std::string(f.flag) + " " + f.then + " in the checkpoint, " +
                                     f.now + " now");
    }
  }
  return Status::OK();
}

}  // namespace strata::ckpt
