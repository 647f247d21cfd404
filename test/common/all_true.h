// Test helper for tests under mpirun: whether a local check held on every rank (each rank
// learns the same answer, so every rank's CHECK agrees).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>

#include "strata/comm/comm.h"

namespace strata::test {

inline bool AllTrue(Comm* comm, bool ok) {
  int64_t bad[1] = {ok ? 0 : 1};
  REQUIRE(comm->AllreduceSum(bad, 1).ok());
  return bad[0] == 0;
}

}  // namespace strata::test
