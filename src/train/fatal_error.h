// The last line of defence of strata-train: an exception that no one caught (most often
// std::bad_alloc, when a pass or a model does not fit in memory) ends this rank with one
// line naming the rank and the error and a hint of the flags that size memory, then exit
// status 1 at once. mpirun (or srun) sees the rank leave without MPI_Finalize and ends the
// others, so the job ends within seconds instead of hanging in a collective.
// Thread safety: the handler may run on any thread; install it once, from main.
#pragma once

namespace strata {

void InstallFatalErrorHandler(const char* program, int rank);

}  // namespace strata
