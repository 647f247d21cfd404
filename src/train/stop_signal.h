// Stop requests by signal: SIGTERM and SIGUSR1 (Slurm's preemption and time-limit warnings;
// mpirun forwards SIGUSR1 to every rank) ask the job to stop at the next pass boundary,
// after writing a checkpoint, instead of dying mid-pass. The handler only records the
// signal; the trainer polls it once a pass and the ranks agree on it.
// Thread safety: StopSignal may be called from any thread.
#pragma once

#include "strata/comm/comm.h"
#include "strata/common/status.h"

namespace strata {

// Installs the handlers (once, from main before training starts).
void InstallStopHandlers();

// The first stop signal received, or 0.
int StopSignal();

// Test seam, off unless STRATA_HOLD_AFTER_PASS=N is in the environment (then a getenv a
// pass): a job that has completed exactly N passes waits there, the ranks agreeing every
// 20 ms, until some rank has a stop signal (or 120 s have passed). A test can then preempt
// the job at the pass it chose rather than at one a race picked. A collective on comm.
Status HoldForStop(Comm* comm, int passes);

}  // namespace strata
