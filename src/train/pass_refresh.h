// PassRefresh: pass consistency on the requester's side. The pipeline pulls pass p+1 while
// pass p trains, so an owner flags (held) every row that an unfinished earlier pass held at
// pull time: its stored value is stale. Before p+1 trains, every earlier pass is home, and
// each flagged row is replaced in the HBM-PS standby tables (where p+1 is staged): by this
// rank's own final row of pass p when it trained that key (the active tables still hold
// pass p, and every rank's replica of a row is bitwise the same), else by pulling the row
// again from its owner, which stores the final value now. Both passes' keys are in routing
// order (by owner rank, then ascending: a pass's sorted distinct keys grouped stably,
// ParamExchange::Pull), so the held keys of this rank's previous pass are found by one walk
// of the two lists side by side; a list out of that order only pulls rows it could have
// copied.
//
// Not thread-safe: the Train stage's thread, between Next and SwapIn of the pipeline.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/comm/param_exchange.h"
#include "strata/hbm/hbm_ps.h"
#include "train/pass_data.h"

namespace strata {

class PassRefresh {
 public:
  // The pass just pushed home trained keys (in routing order: PassRouting::keys()); the
  // active tables hold their final rows.
  void Remember(const std::vector<uint64_t>& keys);

  // The active tables no longer hold the remembered pass (evaluation loaded its rows).
  void Forget() { previous_.clear(); }

  // Replaces the held rows of `pass` (staged, not yet active) in hbm's standby tables. A
  // collective on exchange's Comm (the pull of rows this rank does not hold); the local
  // errors are agreed on. Frees pass->held.
  Status Apply(PassData* pass, HbmPs* hbm, ParamExchange* exchange, Comm* comm);

  // Rows of the last Apply taken from this rank's previous pass, and pulled again.
  size_t copied() const { return copied_; }
  size_t pulled() const { return pulled_; }

 private:
  std::vector<uint64_t> previous_;  // the remembered pass's keys, in routing order
  size_t copied_ = 0, pulled_ = 0;
};

}  // namespace strata
