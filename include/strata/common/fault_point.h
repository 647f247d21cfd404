// Test seams, both off unless an environment variable names them (then each costs a getenv).
// FaultPoint: crash-test seams. When STRATA_CRASH_AT names this point, optionally with the
// occurrence to stop at (STRATA_CRASH_AT=checkpoint-before-publish:2 kills the process the
// second time it gets there; no count means the first), the process kills itself with
// SIGKILL, as a power cut or an OOM kill would. Tests use it to hit narrow windows
// (mid-checkpoint) deterministically.
// InjectedFailure: error seams, one in each stage of the trainer (read, pull, stage, train,
// push, checkpoint) and after the dense sum on the devices (dense-sum), where a rank-local
// failure (a bad disk, a device error) would surface before the ranks agree on it. When STRATA_FAIL_AT=point:rank names it, that rank gets an
// I/O error there, so tests can check that one rank's failure ends the whole job.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

#include "strata/common/status.h"

namespace strata {

inline void FaultPoint(const char* name) {
  const char* at = std::getenv("STRATA_CRASH_AT");
  if (at == nullptr) return;
  const std::string spec(at);
  const size_t colon = spec.find(':');
  if (spec.substr(0, colon) != name) return;
  static std::atomic<long> seen{0};
  const long want = colon == std::string::npos ? 1 : std::atol(spec.c_str() + colon + 1);
  if (++seen >= want) std::raise(SIGKILL);
}

inline Status InjectedFailure(const char* name, int rank) {
  const char* at = std::getenv("STRATA_FAIL_AT");
  if (at == nullptr) return Status::OK();
  const std::string spec(at);
  const size_t colon = spec.find(':');
  if (spec.substr(0, colon) != name || colon == std::string::npos || std::atoi(spec.c_str() + colon + 1) != rank) {
    return Status::OK();
  }
  return Status::IOError(std::string("injected failure at ") + name + " on rank " + std::to_string(rank));
}

}  // namespace strata
