// PassRefresh: replaces rows that an earlier pass held at pull time.
#include "train/pass_refresh.h"

#include "strata/common/partition.h"

namespace strata {

void PassRefresh::Remember(const std::vector<uint64_t>& keys) {
  previous_ = keys;
}

Status PassRefresh::Apply(PassData* pass, HbmPs* hbm, ParamExchange* exchange, Comm* comm) {
  const std::vector<uint64_t>& keys = pass->routing.keys();
  // Routing order: by owner rank, then by key. A held key the previous pass trained is
  // found by walking the previous pass's keys alongside this one's, once.
  const int ranks = comm->size();
  const auto before = [ranks](uint64_t a, uint64_t b) {
    const int owner_a = OwnerRank(a, ranks), owner_b = OwnerRank(b, ranks);
    return owner_a != owner_b ? owner_a < owner_b : a < b;
  };
  std::vector<uint64_t> mine, again;
  size_t at = 0;  // the first of the previous pass's keys not before keys[i]
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!pass->held[i]) continue;
    while (at < previous_.size() && before(previous_[at], keys[i])) ++at;
    const bool have = at < previous_.size() && previous_[at] == keys[i];
    (have ? mine : again).push_back(keys[i]);
  }
  std::vector<uint8_t>().swap(pass->held);
  copied_ = mine.size();
  pulled_ = again.size();
  Status local;
  if (!mine.empty()) local = hbm->StageFromActive(mine.data(), mine.size(), exchange->row_bytes());
  PulledRows pulled;
  STRATA_RETURN_IF_ERROR(exchange->PullReadOnly(&again, &pulled));
  pulled.ForEachPart(again, [&](const uint64_t* keys, size_t n, const uint8_t* rows) {
    if (local.ok()) local = hbm->Stage(keys, n, rows);
  });
  return comm->AgreeOn(local);
}

}  // namespace strata
