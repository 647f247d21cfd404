// Thin wrappers over the HDF5 C API for the checkpoint files: RAII handles, chunked
// datasets (Fletcher32-checked unless their file has a checksum of its own) written and
// read in row ranges, contiguous datasets of a fixed size whose bytes the caller writes,
// scalar/string/array attributes.
// Every failure becomes a Status naming the file and the object, with HDF5's innermost
// error description ("data error detected by Fletcher32 checksum"). Stateless apart from
// the handles; safe to use from several threads on different files.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/common/status.h"

namespace strata::ckpt::h5 {

// Switches off HDF5's automatic error printing for the calling thread (the thread-safe
// HDF5 keeps error settings per thread); every thread that calls HDF5 calls this first.
void SilenceErrors();

// Owns one hid_t and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) { Reset(); id_ = std::exchange(o.id_, H5I_INVALID_HID); closer_ = o.closer_; }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports a failure (a file close flushes: it can fail).
  Status Close(const std::string& what);

 private:
  void Reset() { if (id_ >= 0) closer_(id_); id_ = H5I_INVALID_HID; }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// "<what>: <HDF5's innermost error description>"; clears the error stack.
Status Error(Status::Code code, const std::string& what);

// align > 0: objects of 64 KiB or more start at multiples of align (so that their bytes can
// be written with O_DIRECT).
Status CreateFile(const std::string& path, Handle* file, uint64_t align = 0);
Status OpenFileReadOnly(const std::string& path, Handle* file);
Status CreateGroup(hid_t loc, const std::string& name, const std::string& file, Handle* group);
Status OpenGroup(hid_t loc, const std::string& name, const std::string& file, Handle* group);

// Whether HDF5 checks each chunk of a dataset with its Fletcher32 filter. kNone is for the
// datasets of a file whose whole content is checksummed elsewhere (format.h): the filter
// would cost most of the write's CPU for a check that is made anyway. Readers need not
// know: HDF5 applies the filter a dataset was written with.
enum class ChunkCheck { kFletcher32, kNone };

// A chunked, extendible dataset of rank 1 (cols == 0) or (rows, cols). Owns the handle;
// `where` ("rows-0.h5: /rows/keys") prefixes every error.
class Dataset {
 public:
  static Status Create(hid_t loc, const std::string& name, hid_t type, uint64_t cols, uint64_t chunk_rows,
                       ChunkCheck check, const std::string& where, Dataset* out);
  // A contiguous dataset of exactly `rows` rows, its space allocated now and never filled:
  // its bytes are written at FileOffset() by the caller, once the file is closed.
  static Status CreateFixed(hid_t loc, const std::string& name, hid_t type, uint64_t cols, uint64_t rows,
                            const std::string& where, Dataset* out);
  static Status Open(hid_t loc, const std::string& name, hid_t type, uint64_t cols,
                     const std::string& where, Dataset* out);

  uint64_t rows() const { return rows_; }
  const std::string& where() const { return where_; }
  // Appends n rows of (cols or 1) elements of the memory type given at Create.
  Status Append(const void* data, uint64_t n);
  // Reads rows [first, first + n) into data. REQUIRES: first + n <= rows().
  Status Read(uint64_t first, uint64_t n, void* data) const;
  // Byte offset of each chunk in the file (of the whole data, for a contiguous dataset),
  // for tests and tools that damage or locate data.
  Status ChunkOffsets(std::vector<uint64_t>* offsets) const;
  // Byte offset of a contiguous dataset's data in the file.
  Status FileOffset(uint64_t* offset) const;
  // Whether the file holds the elements as the memory type lays them out (same type and
  // byte order), so that its bytes may be read as they are.
  bool StoresMemoryBytes() const;

 private:
  Status Select(uint64_t first, uint64_t n, Handle* file_space, Handle* mem_space) const;
  Handle ds_;
  hid_t type_ = H5I_INVALID_HID;  // memory type, a predefined native type (not owned)
  uint64_t cols_ = 0;
  uint64_t rows_ = 0;
  std::string where_;
};

// Writes a whole small vector as one dataset (chunked like the row datasets).
Status WriteVector(hid_t loc, const std::string& name, hid_t type, const void* data, uint64_t n,
                   const std::string& where);
template <typename T>
Status ReadVector(hid_t loc, const std::string& name, hid_t type, const std::string& where,
                  std::vector<T>* out) {
  Dataset ds;
  STRATA_RETURN_IF_ERROR(Dataset::Open(loc, name, type, 0, where, &ds));
  out->resize(ds.rows());
  return ds.Read(0, ds.rows(), out->data());
}

// Attributes: numbers of a native type, arrays of int, and fixed-length strings.
Status WriteAttr(hid_t obj, const std::string& name, hid_t type, const void* value,
                 const std::string& where);
Status ReadAttr(hid_t obj, const std::string& name, hid_t type, void* value,
                const std::string& where);
Status WriteIntArrayAttr(hid_t obj, const std::string& name, const std::vector<int>& values,
                         const std::string& where);
Status ReadIntArrayAttr(hid_t obj, const std::string& name, const std::string& where,
                        std::vector<int>* values);
Status WriteStringAttr(hid_t obj, const std::string& name, const std::string& value,
                       const std::string& where);
Status ReadStringAttr(hid_t obj, const std::string& name, const std::string& where,
                      std::string* value);
// Whether obj has the attribute (fields added after a format's first files are optional).
bool HasAttr(hid_t obj, const std::string& name);

}  // namespace strata::ckpt::h5
