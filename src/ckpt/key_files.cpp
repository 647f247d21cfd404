// Per-rank key lists beside the rank files: pending-<r>.h5, the keys admission has counted
// but not yet admitted (strata/ps/admission.h), and deleted-<r>.h5, the keys eviction
// erased since an increment's or delta's base. Loaded by the keys' new owners.
#include <filesystem>

#include "ckpt/file_sync.h"
#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"

namespace strata::ckpt {
namespace {

// Per-key columns of a pending file (absent in a deleted file).
struct PendingColumns {
  std::vector<uint8_t>* counts;
  std::vector<uint32_t>* last;
};

// Writes <dir>/<name>: group /<group> with attr rank, dataset keys and, for pending keys,
// datasets counts (u8) and last_pass (u32); then fsyncs it.
Status WriteKeyFile(const std::string& dir, const std::string& name, const char* group_name, int rank,
                    const std::vector<uint64_t>& keys, const PendingColumns* pending) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  const std::string path = dir + "/" + name, where = path + ": /" + group_name;
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::CreateFile(path, &file));
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file.get(), group_name, path, &group));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(group.get(), "rank", H5T_NATIVE_INT, &rank, where));
  STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), "keys", H5T_NATIVE_UINT64, keys.data(), keys.size(), where + "/keys"));
  if (pending) {
    STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), "counts", H5T_NATIVE_UINT8, pending->counts->data(),
                                           pending->counts->size(), where + "/counts"));
    STRATA_RETURN_IF_ERROR(h5::WriteVector(group.get(), "last_pass", H5T_NATIVE_UINT32, pending->last->data(),
                                           pending->last->size(), where + "/last_pass"));
  }
  STRATA_RETURN_IF_ERROR(group.Close(path));
  STRATA_RETURN_IF_ERROR(file.Close(path));
  return SyncPath(path);
}

// Reads what WriteKeyFile wrote, checking the rank it names and that every key is its.
Status ReadKeyFile(const std::string& path, const char* group_name, const CheckpointMeta& meta, int file_rank,
                   std::vector<uint64_t>* keys, const PendingColumns* pending) {
  const std::string where = path + ": /" + group_name;
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::OpenFileReadOnly(path, &file));
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file.get(), group_name, path, &group));
  int stored_rank = -1;
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(group.get(), "rank", H5T_NATIVE_INT, &stored_rank, where));
  if (stored_rank != file_rank) {
    return Status::Corruption(path + ": written by rank " + std::to_string(stored_rank) + ", expected " +
                              std::to_string(file_rank));
  }
  STRATA_RETURN_IF_ERROR(h5::ReadVector(group.get(), "keys", H5T_NATIVE_UINT64, where + "/keys", keys));
  if (pending) {
    STRATA_RETURN_IF_ERROR(h5::ReadVector(group.get(), "counts", H5T_NATIVE_UINT8, where + "/counts", pending->counts));
    STRATA_RETURN_IF_ERROR(h5::ReadVector(group.get(), "last_pass", H5T_NATIVE_UINT32, where + "/last_pass", pending->last));
    if (pending->counts->size() != keys->size() || pending->last->size() != keys->size()) {
      return Status::Corruption(path + ": " + std::to_string(keys->size()) + " keys but " +
                                std::to_string(pending->counts->size()) + " counts and " +
                                std::to_string(pending->last->size()) + " last passes");
    }
  }
  for (size_t i = 0; i < keys->size(); ++i) {
    if (OwnerRank((*keys)[i], meta.ranks) != file_rank || (pending && (*pending->counts)[i] == 0)) {
      return Status::Corruption(path + ": entry " + std::to_string(i) + " (key " + std::to_string((*keys)[i]) +
                                ") is not a " + group_name + " key of rank " + std::to_string(file_rank));
    }
  }
  return Status::OK();
}

// The entries of every rank's file (or only rank's own when the rank count is the same)
// whose keys rank owns among `ranks`.
Status LoadOwned(const std::string& ckpt_path, const CheckpointMeta& meta, std::string (*file_name)(int),
                 const char* group, int rank, int ranks, std::vector<uint64_t>* keys, const PendingColumns* pending) {
  std::vector<uint64_t> file_keys;
  std::vector<uint8_t> file_counts;
  std::vector<uint32_t> file_last;
  const PendingColumns file_pending{&file_counts, &file_last};
  for (int f = 0; f < meta.ranks; ++f) {
    if (ranks == meta.ranks && f != rank) continue;
    STRATA_RETURN_IF_ERROR(ReadKeyFile(ckpt_path + "/" + file_name(f), group, meta, f, &file_keys,
                                       pending ? &file_pending : nullptr));
    for (size_t i = 0; i < file_keys.size(); ++i) {
      if (OwnerRank(file_keys[i], ranks) != rank) continue;
      keys->push_back(file_keys[i]);
      if (!pending) continue;
      pending->counts->push_back(file_counts[i]);
      pending->last->push_back(file_last[i]);
    }
  }
  return Status::OK();
}

}  // namespace

Status WritePending(const std::string& ckpt_tmp_dir, int rank, const std::vector<uint64_t>& keys,
                    std::vector<uint8_t> counts, std::vector<uint32_t> last) {
  const PendingColumns pending{&counts, &last};
  return WriteKeyFile(ckpt_tmp_dir, PendingFileName(rank), "pending", rank, keys, &pending);
}

Status WriteDeleted(const std::string& ckpt_tmp_dir, int rank, const std::vector<uint64_t>& keys) {
  return WriteKeyFile(ckpt_tmp_dir, DeletedFileName(rank), "deleted", rank, keys, nullptr);
}

bool HasDeletedFiles(const CheckpointMeta& meta) {
  return meta.kind != Kind::kFull && meta.model.evict_unseen_passes > 0;
}

Status LoadOwnedPending(const std::string& ckpt_path, const CheckpointMeta& meta, int rank, int ranks,
                        std::vector<uint64_t>* keys, std::vector<uint8_t>* counts, std::vector<uint32_t>* last) {
  keys->clear();
  counts->clear();
  last->clear();
  if (meta.model.admit_min_count == 0) return Status::OK();  // the writer admitted every key
  const PendingColumns pending{counts, last};
  return LoadOwned(ckpt_path, meta, PendingFileName, "pending", rank, ranks, keys, &pending);
}

Status LoadOwnedDeleted(const std::string& ckpt_path, const CheckpointMeta& meta, int rank, int ranks,
                        std::vector<uint64_t>* keys) {
  keys->clear();
  if (!HasDeletedFiles(meta)) return Status::OK();
  return LoadOwned(ckpt_path, meta, DeletedFileName, "deleted", rank, ranks, keys, nullptr);
}

}  // namespace strata::ckpt
