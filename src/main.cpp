// strata-train: the SPMD entry point. Parses flags and starts MPI, then runs the training
// job. Exit status: 0 done (or the memory plan printed, with --dry-run); 2 a bad flag or
// config file, or a memory plan larger than the node (usage); 3 stopped by SIGTERM or
// SIGUSR1 at a pass boundary, after its checkpoint (run again with --resume=auto); 1 any
// other error (input data, I/O, communication, device), reported once by rank 0 after all
// ranks agreed on it, or an uncaught exception such as running out of memory (fatal_error.h).
#include <fmt/format.h>

#include "strata/comm/comm.h"
#include "strata/train/options.h"
#include "strata/train/trainer.h"
#include "train/fatal_error.h"
#include "train/stop_signal.h"

int main(int argc, char** argv) {
  strata::MpiSession mpi(&argc, &argv);
  strata::Comm comm;
  strata::InstallFatalErrorHandler("strata-train", comm.rank());
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
  strata::InstallStopHandlers();
  st = strata::RunTraining(options, &comm);
  if (st.code() == strata::Status::Code::kUsage) {
    if (comm.rank() == 0) fmt::print(stderr, "strata-train: {}\n", st.message());
    return 2;
  }
  if (st.code() == strata::Status::Code::kStopped) {
    if (comm.rank() == 0) fmt::print(stderr, "strata-train: {}\n", st.message());
    return 3;
  }
  if (!st.ok()) {
    if (comm.rank() == 0) fmt::print(stderr, "strata-train: error: {}\n", st.ToString());
    return 1;
  }
  return 0;
}
