// pending-<r>.h5: the keys admission has counted but not yet admitted (strata/ps/admission.h),
// written beside the rank's rows and loaded by their new owners on resume.
#include <filesystem>

#include "ckpt/file_sync.h"
#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"

namespace strata::ckpt {

Status WritePending(const std::string& ckpt_tmp_dir, int rank, const std::vector<uint64_t>& keys,
                    const std::vector<uint8_t>& counts) {
  std::error_code ec;
  std::filesystem::create_directories(ckpt_tmp_dir, ec);
  if (ec) return Status::IOError("cannot create " + ckpt_tmp_dir + ": " + ec.message());
  const std::string path = ckpt_tmp_dir + "/" + PendingFileName(rank);
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::CreateFile(path, &file));
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file.get(), "pending", path, &group));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(group.get(), "rank", H5T_NATIVE_INT, &rank, path + ": /pending"));
  STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), "keys", H5T_NATIVE_UINT64, keys.data(), keys.size(),
                                         path + ": /pending/keys"));
  STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), "counts", H5T_NATIVE_UINT8, counts.data(), counts.size(),
                                         path + ": /pending/counts"));
  STRATA_RETURN_IF_ERROR(group.Close(path));
  STRATA_RETURN_IF_ERROR(file.Close(path));
  return SyncPath(path);
}

namespace {

Status ReadPendingFile(const std::string& path, int file_rank, std::vector<uint64_t>* keys,
                       std::vector<uint8_t>* counts) {
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::OpenFileReadOnly(path, &file));
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file.get(), "pending", path, &group));
  int stored_rank = -1;
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(group.get(), "rank", H5T_NATIVE_INT, &stored_rank, path + ": /pending"));
  if (stored_rank != file_rank) {
    return Status::Corruption(path + ": written by rank " + std::to_string(stored_rank) + ", expected " +
                              std::to_string(file_rank));
  }
  STRATA_RETURN_IF_ERROR(h5::ReadVector(group.get(), "keys", H5T_NATIVE_UINT64, path + ": /pending/keys", keys));
  STRATA_RETURN_IF_ERROR(h5::ReadVector(group.get(), "counts", H5T_NATIVE_UINT8, path + ": /pending/counts", counts));
  if (counts->size() != keys->size()) {
    return Status::Corruption(path + ": " + std::to_string(keys->size()) + " keys but " +
                              std::to_string(counts->size()) + " counts");
  }
  return Status::OK();
}

}  // namespace

Status LoadOwnedPending(const std::string& ckpt_path, const CheckpointMeta& meta, int rank, int ranks,
                        std::vector<uint64_t>* keys, std::vector<uint8_t>* counts) {
  keys->clear();
  counts->clear();
  if (meta.model.admit_min_count == 0) return Status::OK();  // the writer admitted every key
  std::vector<uint64_t> file_keys;
  std::vector<uint8_t> file_counts;
  for (int f = 0; f < meta.ranks; ++f) {
    if (ranks == meta.ranks && f != rank) continue;
    const std::string path = ckpt_path + "/" + PendingFileName(f);
    STRATA_RETURN_IF_ERROR(ReadPendingFile(path, f, &file_keys, &file_counts));
    for (size_t i = 0; i < file_keys.size(); ++i) {
      if (OwnerRank(file_keys[i], meta.ranks) != f || file_counts[i] == 0) {
        return Status::Corruption(path + ": entry " + std::to_string(i) + " (key " + std::to_string(file_keys[i]) +
                                  ", count " + std::to_string(file_counts[i]) + ") is not a pending key of rank " +
                                  std::to_string(f));
      }
      if (OwnerRank(file_keys[i], ranks) != rank) continue;
      keys->push_back(file_keys[i]);
      counts->push_back(file_counts[i]);
    }
  }
  return Status::OK();
}

}  // namespace strata::ckpt
