// strata-train: the SPMD entry point. Parses flags (exit 2 on a bad one), starts MPI and
// runs the training job; any error ends every rank with a message and a nonzero exit.
#include <fmt/format.h>

#include "strata/comm/comm.h"
#include "strata/train/options.h"
#include "strata/train/trainer.h"

int main(int argc, char** argv) {
  strata::MpiSession mpi(&argc, &argv);
  strata::Comm comm;
  strata::TrainOptions options;
  strata::Status st = strata::ParseTrainOptions(argc, argv, &options);
  if (!st.ok()) {
    if (comm.rank() == 0) fmt::print(stderr, "strata-train: {}\n", st.message());
    return 2;
  }
  if (options.show_help) {
    if (comm.rank() == 0) fmt::print("{}", options.help_text);
    return 0;
  }
  st = strata::RunTraining(options, &comm);
  if (!st.ok()) {
    if (comm.rank() == 0) fmt::print(stderr, "strata-train: error: {}\n", st.ToString());
    return st.code() == strata::Status::Code::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
