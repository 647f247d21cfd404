// PassRefresh: replaces rows that an earlier pass held at pull time.
#include "train/pass_refresh.h"

namespace strata {

void PassRefresh::Remember(const std::vector<uint64_t>& keys) {
  previous_.Reset(keys.size());
  constexpr size_t kAhead = 16;  // keys between a key's prefetch and its insert
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + kAhead < keys.size()) previous_.Prefetch(keys[i + kAhead]);
    previous_.Insert(keys[i]);
  }
  remembered_ = true;
}

Status PassRefresh::Apply(PassData* pass, HbmPs* hbm, ParamExchange* exchange, Comm* comm) {
  const std::vector<uint64_t>& keys = pass->routing.keys();
  std::vector<uint64_t> mine, again;
  constexpr size_t kAhead = 16;  // keys between a key's prefetch and its lookup
  for (size_t i = 0; i < keys.size(); ++i) {
    if (remembered_ && i + kAhead < keys.size() && pass->held[i + kAhead]) previous_.Prefetch(keys[i + kAhead]);
    if (!pass->held[i]) continue;
    const bool have = remembered_ && previous_.Find(keys[i]) != KeyIndex::kNone;
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
