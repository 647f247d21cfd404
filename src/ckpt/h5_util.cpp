// HDF5 wrappers for the checkpoint files (see h5_util.h).
#include "ckpt/h5_util.h"

#include <algorithm>
#include <filesystem>

namespace strata::ckpt::h5 {
namespace {

// HDF5 closes every open file at exit. A file whose close failed (a full disk) stays open
// in its tables, and that second close crashes inside the library after the error was
// reported (exit 139 instead of 1). The files' errors are handled where they occur, so
// the process leaves cleanup at exit to the OS. Runs before main, before any HDF5 call.
const bool kNoAtExit = H5dont_atexit() >= 0;

herr_t KeepInnermost(unsigned, const H5E_error2_t* err, void* data) {
  if (err->desc && err->desc[0]) *static_cast<std::string*>(data) = err->desc;
  return 0;
}

// A scalar (or NULL, for n == 0) or simple rank-1 dataspace.
Handle Space(const hsize_t* n) {
  if (!n) return Handle(H5Screate(H5S_SCALAR), H5Sclose);
  if (*n == 0) return Handle(H5Screate(H5S_NULL), H5Sclose);
  return Handle(H5Screate_simple(1, n, nullptr), H5Sclose);
}

bool SameKind(hid_t a, hid_t b) {
  return H5Tget_class(a) == H5Tget_class(b) && H5Tget_size(a) == H5Tget_size(b) &&
         (H5Tget_class(a) != H5T_INTEGER || H5Tget_sign(a) == H5Tget_sign(b));
}

Status WriteAttrSpace(hid_t obj, const std::string& name, hid_t type, const hsize_t* n,
                      const void* value, const std::string& where) {
  Handle space = Space(n);
  Handle attr(H5Acreate2(obj, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || (value && H5Awrite(attr.get(), type, value) < 0)) {
    return Error(Status::Code::kIOError, where + ": cannot write attribute " + name);
  }
  return Status::OK();
}

Status OpenAttr(hid_t obj, const std::string& name, const std::string& where, Handle* attr) {
  *attr = Handle(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr->valid()) return Error(Status::Code::kCorruption, where + ": missing attribute " + name);
  return Status::OK();
}

}  // namespace

void SilenceErrors() {
  thread_local bool silenced = false;
  if (!silenced) silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
}

Status Handle::Close(const std::string& what) {
  const herr_t rc = id_ >= 0 ? closer_(id_) : 0;
  id_ = H5I_INVALID_HID;
  return rc < 0 ? Error(Status::Code::kIOError, what + ": close failed") : Status::OK();
}

Status Error(Status::Code code, const std::string& what) {
  std::string inner;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, KeepInnermost, &inner);
  H5Eclear2(H5E_DEFAULT);
  return Status::WithCode(code, inner.empty() ? what : what + " (" + inner + ")");
}

Status CreateFile(const std::string& path, Handle* file, uint64_t align) {
  SilenceErrors();
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || (align > 0 && H5Pset_alignment(fapl.get(), 64 << 10, align) < 0)) {
    return Error(Status::Code::kIOError, path + ": cannot set up HDF5 file");
  }
  *file = Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file->valid()) return Error(Status::Code::kIOError, path + ": cannot create HDF5 file");
  return Status::OK();
}

Status OpenFileReadOnly(const std::string& path, Handle* file) {
  SilenceErrors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path + ": missing");
  *file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file->valid()) return Status::OK();
  return Error(Status::Code::kCorruption, path + ": cannot open as HDF5");
}

Status CreateGroup(hid_t loc, const std::string& name, const std::string& file, Handle* group) {
  *group = Handle(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group->valid()) return Error(Status::Code::kIOError, file + ": cannot create group " + name);
  return Status::OK();
}

Status OpenGroup(hid_t loc, const std::string& name, const std::string& file, Handle* group) {
  *group = Handle(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group->valid()) return Error(Status::Code::kCorruption, file + ": missing group " + name);
  return Status::OK();
}

Status Dataset::Create(hid_t loc, const std::string& name, hid_t type, uint64_t cols, uint64_t chunk_rows,
                       ChunkCheck check, const std::string& where, Dataset* out) {
  const int rank = cols ? 2 : 1;
  const hsize_t dims[2] = {0, cols}, maxdims[2] = {H5S_UNLIMITED, cols};
  const hsize_t chunk[2] = {std::max<hsize_t>(chunk_rows, 1), cols};
  Handle space(H5Screate_simple(rank, dims, maxdims), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.valid() || !dcpl.valid() || H5Pset_chunk(dcpl.get(), rank, chunk) < 0 ||
      (check == ChunkCheck::kFletcher32 && H5Pset_fletcher32(dcpl.get()) < 0)) {
    return Error(Status::Code::kIOError, where + ": cannot set up dataset");
  }
  out->ds_ = Handle(H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(),
                               H5P_DEFAULT), H5Dclose);
  if (!out->ds_.valid()) return Error(Status::Code::kIOError, where + ": cannot create dataset");
  out->type_ = type;
  out->cols_ = cols;
  out->rows_ = 0;
  out->where_ = where;
  return Status::OK();
}

Status Dataset::CreateFixed(hid_t loc, const std::string& name, hid_t type, uint64_t cols, uint64_t rows,
                            const std::string& where, Dataset* out) {
  const int rank = cols ? 2 : 1;
  const hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.valid() || !dcpl.valid() || H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) < 0 ||
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0 || H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0) {
    return Error(Status::Code::kIOError, where + ": cannot set up dataset");
  }
  out->ds_ = Handle(H5Dcreate2(loc, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!out->ds_.valid()) return Error(Status::Code::kIOError, where + ": cannot create dataset");
  out->type_ = type;
  out->cols_ = cols;
  out->rows_ = rows;
  out->where_ = where;
  return Status::OK();
}

Status Dataset::FileOffset(uint64_t* offset) const {
  const haddr_t addr = H5Dget_offset(ds_.get());
  if (addr == HADDR_UNDEF) return Error(Status::Code::kIOError, where_ + ": no contiguous data in the file");
  *offset = addr;
  return Status::OK();
}

bool Dataset::StoresMemoryBytes() const {
  Handle file_type(H5Dget_type(ds_.get()), H5Tclose);
  return file_type.valid() && H5Tequal(file_type.get(), type_) > 0;
}

Status Dataset::Open(hid_t loc, const std::string& name, hid_t type, uint64_t cols,
                     const std::string& where, Dataset* out) {
  out->ds_ = Handle(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!out->ds_.valid()) return Error(Status::Code::kCorruption, where + ": missing dataset");
  Handle file_type(H5Dget_type(out->ds_.get()), H5Tclose);
  Handle space(H5Dget_space(out->ds_.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (!file_type.valid() || rank != (cols ? 2 : 1) || !SameKind(file_type.get(), type)) {
    return Status::Corruption(where + ": unexpected type or rank (expected " +
                              (cols ? "(n, " + std::to_string(cols) + ")" : std::string("(n)")) + ")");
  }
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (cols && dims[1] != cols) {
    return Status::Corruption(where + ": has " + std::to_string(dims[1]) + " columns, expected " +
                              std::to_string(cols));
  }
  out->type_ = type;
  out->cols_ = cols;
  out->rows_ = dims[0];
  out->where_ = where;
  return Status::OK();
}

Status Dataset::Select(uint64_t first, uint64_t n, Handle* file_space, Handle* mem_space) const {
  const int rank = cols_ ? 2 : 1;
  const hsize_t start[2] = {first, 0}, count[2] = {n, cols_};
  *file_space = Handle(H5Dget_space(ds_.get()), H5Sclose);
  *mem_space = Handle(H5Screate_simple(rank, count, nullptr), H5Sclose);
  if (!file_space->valid() || !mem_space->valid() ||
      H5Sselect_hyperslab(file_space->get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0) {
    return Error(Status::Code::kIOError, where_ + ": cannot select rows");
  }
  return Status::OK();
}

Status Dataset::Append(const void* data, uint64_t n) {
  if (n == 0) return Status::OK();
  const hsize_t dims[2] = {rows_ + n, cols_};
  if (H5Dset_extent(ds_.get(), dims) < 0) return Error(Status::Code::kIOError, where_ + ": cannot extend");
  Handle file_space, mem_space;
  STRATA_RETURN_IF_ERROR(Select(rows_, n, &file_space, &mem_space));
  if (H5Dwrite(ds_.get(), type_, mem_space.get(), file_space.get(), H5P_DEFAULT, data) < 0) {
    return Error(Status::Code::kIOError, where_ + ": write failed");
  }
  rows_ += n;
  return Status::OK();
}

Status Dataset::Read(uint64_t first, uint64_t n, void* data) const {
  if (n == 0) return Status::OK();
  Handle file_space, mem_space;
  STRATA_RETURN_IF_ERROR(Select(first, n, &file_space, &mem_space));
  if (H5Dread(ds_.get(), type_, mem_space.get(), file_space.get(), H5P_DEFAULT, data) < 0) {
    return Error(Status::Code::kCorruption, where_ + ": rows " + std::to_string(first) + ".." +
                                                std::to_string(first + n) + " unreadable");
  }
  return Status::OK();
}

Status Dataset::ChunkOffsets(std::vector<uint64_t>* offsets) const {
  Handle dcpl(H5Dget_create_plist(ds_.get()), H5Pclose);
  if (dcpl.valid() && H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS) {
    uint64_t at = 0;
    STRATA_RETURN_IF_ERROR(FileOffset(&at));
    offsets->assign(1, at);
    return Status::OK();
  }
  hsize_t n = 0;
  Handle space(H5Dget_space(ds_.get()), H5Sclose);
  if (!space.valid() || H5Dget_num_chunks(ds_.get(), space.get(), &n) < 0) {
    return Error(Status::Code::kIOError, where_ + ": chunk index");
  }
  offsets->clear();
  for (hsize_t i = 0; i < n; ++i) {
    hsize_t coords[2];
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    if (H5Dget_chunk_info(ds_.get(), space.get(), i, coords, &mask, &addr, &size) < 0) {
      return Error(Status::Code::kIOError, where_ + ": chunk info");
    }
    offsets->push_back(addr);
  }
  return Status::OK();
}

Status WriteVector(hid_t loc, const std::string& name, hid_t type, const void* data, uint64_t n,
                   const std::string& where) {
  Dataset ds;
  STRATA_RETURN_IF_ERROR(
      Dataset::Create(loc, name, type, 0, std::clamp<uint64_t>(n, 1, 1 << 16), ChunkCheck::kFletcher32, where, &ds));
  return ds.Append(data, n);
}

Status WriteAttr(hid_t obj, const std::string& name, hid_t type, const void* value,
                 const std::string& where) {
  return WriteAttrSpace(obj, name, type, nullptr, value, where);
}

Status ReadAttr(hid_t obj, const std::string& name, hid_t type, void* value,
                const std::string& where) {
  Handle attr;
  STRATA_RETURN_IF_ERROR(OpenAttr(obj, name, where, &attr));
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1 || H5Aread(attr.get(), type, value) < 0) {
    return Error(Status::Code::kCorruption, where + ": bad attribute " + name);
  }
  return Status::OK();
}

Status WriteIntArrayAttr(hid_t obj, const std::string& name, const std::vector<int>& values,
                         const std::string& where) {
  const hsize_t n = values.size();
  return WriteAttrSpace(obj, name, H5T_NATIVE_INT, &n, n ? values.data() : nullptr, where);
}

Status ReadIntArrayAttr(hid_t obj, const std::string& name, const std::string& where,
                        std::vector<int>* values) {
  Handle attr;
  STRATA_RETURN_IF_ERROR(OpenAttr(obj, name, where, &attr));
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return Error(Status::Code::kCorruption, where + ": bad attribute " + name);
  values->resize(n);
  if (n > 0 && H5Aread(attr.get(), H5T_NATIVE_INT, values->data()) < 0) {
    return Error(Status::Code::kCorruption, where + ": bad attribute " + name);
  }
  return Status::OK();
}

Status WriteStringAttr(hid_t obj, const std::string& name, const std::string& value,
                       const std::string& where) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.valid() || H5Tset_size(type.get(), std::max<size_t>(value.size(), 1)) < 0 ||
      H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0) {
    return Error(Status::Code::kIOError, where + ": string type for " + name);
  }
  std::string padded = value;
  padded.resize(std::max<size_t>(value.size(), 1), '\0');
  return WriteAttrSpace(obj, name, type.get(), nullptr, padded.data(), where);
}

Status ReadStringAttr(hid_t obj, const std::string& name, const std::string& where,
                      std::string* value) {
  Handle attr;
  STRATA_RETURN_IF_ERROR(OpenAttr(obj, name, where, &attr));
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    return Error(Status::Code::kCorruption, where + ": attribute " + name + " is not a fixed string");
  }
  std::string buf(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), type.get(), buf.data()) < 0) {
    return Error(Status::Code::kCorruption, where + ": bad attribute " + name);
  }
  buf.erase(std::find(buf.begin(), buf.end(), '\0'), buf.end());
  *value = std::move(buf);
  return Status::OK();
}

bool HasAttr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

}  // namespace strata::ckpt::h5
