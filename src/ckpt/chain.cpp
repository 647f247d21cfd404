// Chains of increments: from a checkpoint back to the full checkpoint it builds on.
#include <algorithm>
#include <filesystem>

#include "strata/ckpt/checkpoint.h"

namespace strata::ckpt {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kFull: return "full";
    case Kind::kDelta: return "delta";
    case Kind::kIncrement: return "increment";
  }
  return "?";
}

Status ResolveChain(const std::string& ckpt_path, std::vector<ChainLink>* chain) {
  chain->clear();
  ChainLink link{ckpt_path, {}};
  STRATA_RETURN_IF_ERROR(ReadMeta(link.path, &link.meta));
  const std::string dir = std::filesystem::path(ckpt_path).parent_path().string();
  while (link.meta.kind == Kind::kIncrement) {
    ChainLink base{(dir.empty() ? "" : dir + "/") + CheckpointName(link.meta.base_pass), {}};
    std::error_code ec;
    if (!std::filesystem::exists(base.path + "/" + kMetaFileName, ec)) {
      return Status::NotFound(link.path + " is an increment on pass " + std::to_string(link.meta.base_pass) +
                              ", but its base " + base.path + " is missing");
    }
    STRATA_RETURN_IF_ERROR(ReadMeta(base.path, &base.meta));
    if (base.meta.progress.pass != link.meta.base_pass || base.meta.kind == Kind::kDelta ||
        base.meta.progress.pass >= link.meta.progress.pass) {
      return Status::Corruption(base.path + ": pass " + std::to_string(base.meta.progress.pass) + " (" +
                                KindName(base.meta.kind) + "), not the base of pass " +
                                std::to_string(link.meta.base_pass) + " that " + link.path + " names");
    }
    chain->push_back(std::move(link));
    link = std::move(base);
  }
  chain->push_back(std::move(link));
  std::reverse(chain->begin(), chain->end());
  return Status::OK();
}

}  // namespace strata::ckpt
