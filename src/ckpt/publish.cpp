// Names of checkpoint entries, atomic publishing through LATEST with keep-K retention, and
// resolving a user's path to a checkpoint.
#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <set>

#include "ckpt/file_sync.h"
#include "strata/ckpt/checkpoint.h"

namespace strata::ckpt {
namespace {

namespace fs = std::filesystem;
constexpr const char* kTmpPrefix = ".tmp-";

// "ckpt-00000012" with prefix "ckpt-" -> 12; -1 when name is not prefix + digits.
int64_t NumberAfter(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoll(digits);
}

Status RemoveAll(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  return ec ? Status::IOError("cannot remove " + p.string() + ": " + ec.message()) : Status::OK();
}

// Adds to `names` (entries of dir) the bases their increments build on, back to their full
// checkpoints. False when a chain cannot be read.
bool AddBases(const std::string& dir, std::set<std::string>* names) {
  std::vector<std::string> todo(names->begin(), names->end());
  for (size_t i = 0; i < todo.size(); ++i) {
    std::vector<ChainLink> chain;
    if (!ResolveChain(dir + "/" + todo[i], &chain).ok()) return false;
    for (const ChainLink& link : chain) names->insert(fs::path(link.path).filename().string());
  }
  return true;
}

// Leftover temporaries, and numbered entries like `keep_name` beyond the newest `keep`,
// unless a kept increment builds on them.
Status Prune(const std::string& dir, const std::string& keep_name, int keep) {
  const std::string prefix = keep_name.substr(0, keep_name.rfind('-') + 1);
  std::vector<std::pair<int64_t, std::string>> numbered;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kTmpPrefix, 0) == 0) {
      STRATA_RETURN_IF_ERROR(RemoveAll(e.path()));
    } else if (name != keep_name && NumberAfter(name, prefix) >= 0) {
      numbered.emplace_back(NumberAfter(name, prefix), name);
    }
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  if (keep <= 0) return Status::OK();
  std::sort(numbered.rbegin(), numbered.rend());
  std::set<std::string> needed = {keep_name};
  for (size_t i = 0; i + 1 < static_cast<size_t>(keep) && i < numbered.size(); ++i) needed.insert(numbered[i].second);
  if (!AddBases(dir, &needed)) return Status::OK();  // a kept one's chain is unreadable: remove nothing
  for (const auto& entry : numbered) {
    if (needed.count(entry.second) == 0) STRATA_RETURN_IF_ERROR(RemoveAll(fs::path(dir) / entry.second));
  }
  return Status::OK();
}

}  // namespace

std::string CheckpointName(int64_t pass) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "ckpt-%08lld", static_cast<long long>(pass));
  return buf;
}

std::string DeltaName(int sequence) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "delta-%06d", sequence);
  return buf;
}

std::string TmpName(const std::string& final_name) { return kTmpPrefix + final_name; }

std::string RankFileName(int rank) { return "rows-" + std::to_string(rank) + ".h5"; }
std::string PendingFileName(int rank) { return "pending-" + std::to_string(rank) + ".h5"; }
std::string DeletedFileName(int rank) { return "deleted-" + std::to_string(rank) + ".h5"; }

Status PublishCheckpoint(const std::string& checkpoint_dir, const std::string& tmp_name,
                         const std::string& final_name, int keep) {
  const std::string src = checkpoint_dir + "/" + tmp_name, dst = checkpoint_dir + "/" + final_name;
  std::error_code ec;
  if (!fs::exists(src + "/" + kMetaFileName, ec)) {
    return Status::InvalidArgument("cannot publish " + src + ": no " + kMetaFileName + " (WriteMeta first)");
  }
  // An entry already named final_name (an unselected leftover, or a checkpoint of an
  // abandoned run) is swapped out in one step, so no instant lacks a complete final_name.
  const bool exists = fs::exists(dst, ec);
  const int rc = exists ? ::renameat2(AT_FDCWD, src.c_str(), AT_FDCWD, dst.c_str(), RENAME_EXCHANGE)
                        : std::rename(src.c_str(), dst.c_str());
  if (rc != 0) return ErrnoStatus("cannot rename " + src + " to " + dst, errno);
  STRATA_RETURN_IF_ERROR(SyncDir(checkpoint_dir));
  STRATA_RETURN_IF_ERROR(ReplaceFileDurably(checkpoint_dir, kLatestFileName, final_name + "\n"));
  return Prune(checkpoint_dir, final_name, keep);
}

Status ResolveCheckpoint(const std::string& path_or_dir, std::string* ckpt_path) {
  std::error_code ec;
  if (fs::exists(path_or_dir + "/" + kMetaFileName, ec)) {
    *ckpt_path = path_or_dir;
    return Status::OK();
  }
  const std::string latest = path_or_dir + "/" + kLatestFileName;
  if (!fs::exists(latest, ec)) {
    return Status::NotFound(path_or_dir + ": neither a checkpoint (no " + kMetaFileName +
                            ") nor a checkpoint directory (no " + kLatestFileName + ")");
  }
  std::string name;
  STRATA_RETURN_IF_ERROR(ReadSmallFile(latest, &name));
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    return Status::Corruption(latest + ": does not name a checkpoint ('" + name + "')");
  }
  *ckpt_path = path_or_dir + "/" + name;
  if (!fs::exists(*ckpt_path + "/" + kMetaFileName, ec)) {
    return Status::NotFound(latest + " names " + name + ", but " + *ckpt_path + "/" + kMetaFileName + " is missing");
  }
  return Status::OK();
}

}  // namespace strata::ckpt
