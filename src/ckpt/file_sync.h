// Durability helpers for checkpoint publishing: fsync of a file or directory by path and
// the write-temp, fsync, rename, fsync-directory replacement of a small file (LATEST).
// Every error is a Status naming the path. Stateless, thread-safe.
#pragma once

#include <string>

#include "strata/common/status.h"

namespace strata::ckpt {

// Opens path read-only and fsyncs it (file data and metadata).
Status SyncPath(const std::string& path);
// fsyncs the directory itself, making renames and creations inside it durable.
Status SyncDir(const std::string& dir);
// Writes dir/<name>.tmp, fsyncs it, renames it over dir/name and fsyncs dir.
Status ReplaceFileDurably(const std::string& dir, const std::string& name, const std::string& data);
// Reads a whole small file.
Status ReadSmallFile(const std::string& path, std::string* out);

}  // namespace strata::ckpt
