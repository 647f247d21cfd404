// Stop requests by signal: SIGTERM and SIGUSR1 (Slurm's preemption and time-limit warnings;
// mpirun forwards SIGUSR1 to every rank) ask the job to stop at the next pass boundary,
// after writing a checkpoint, instead of dying mid-pass. The handler only records the
// signal; the trainer polls it once a pass and the ranks agree on it.
// Thread safety: StopSignal may be called from any thread.
#pragma once

namespace strata {

// Installs the handlers (once, from main before training starts).
void InstallStopHandlers();

// The first stop signal received, or 0.
int StopSignal();

}  // namespace strata
