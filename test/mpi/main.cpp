// doctest entry for the multi-rank tests: MPI is initialised around the whole run, and
// every rank runs every case; only rank 0 prints the summary so the counts are read once.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "strata/comm/comm.h"

int main(int argc, char** argv) {
  strata::MpiSession mpi(&argc, &argv);
  strata::Comm comm;
  doctest::Context context(argc, argv);
  if (comm.rank() != 0) context.setOption("out", "/dev/null");
  int failed = context.run();
  // A failure on any rank fails the run everywhere.
  int64_t any[1] = {failed != 0};
  (void)comm.AllreduceSum(any, 1);
  return any[0] != 0 ? 1 : 0;
}
