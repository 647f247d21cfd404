// FaultPoint: crash-test seams. When the environment variable STRATA_CRASH_AT names this
// point, optionally with the occurrence to stop at (STRATA_CRASH_AT=checkpoint-before-publish:2
// kills the process the second time it gets there; no count means the first), the process
// kills itself with SIGKILL, as a power cut or an OOM kill would. Tests use it to hit
// narrow windows (mid-checkpoint) deterministically; unset, it costs one getenv.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

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

}  // namespace strata
