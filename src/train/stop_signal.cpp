// Stop requests by signal (train/stop_signal.h).
#include "train/stop_signal.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace strata {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int sig) {
  if (g_stop_signal == 0) g_stop_signal = sig;
}

}  // namespace

void InstallStopHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

int StopSignal() { return g_stop_signal; }

Status HoldForStop(Comm* comm, int passes) {
  const char* at = std::getenv("STRATA_HOLD_AFTER_PASS");
  if (at == nullptr || std::atoi(at) != passes) return Status::OK();
  for (int waited_ms = 0; waited_ms < 120000; waited_ms += 20) {
    int64_t sig[1] = {StopSignal()};
    STRATA_RETURN_IF_ERROR(comm->AllreduceMax(sig, 1));
    if (sig[0] != 0) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::OK();
}

}  // namespace strata
