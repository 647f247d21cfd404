// doctest entry point for the unit-test binary; every test/unit/*.cpp registers its cases.
// MPI is initialised as a one-rank singleton around the run, so units that take a Comm
// (the pipeline's stages, the pass consistency) are tested here with one rank; the
// multi-rank cases live in test/mpi.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "strata/comm/comm.h"

int main(int argc, char** argv) {
  strata::MpiSession mpi(&argc, &argv);
  doctest::Context context(argc, argv);
  return context.run();
}
