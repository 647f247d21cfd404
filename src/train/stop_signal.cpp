// Stop requests by signal (train/stop_signal.h).
#include "train/stop_signal.h"

#include <csignal>

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

}  // namespace strata
