// std::set_terminate handler: one message line, then _Exit(1).
#include "train/fatal_error.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

namespace strata {
namespace {

const char* g_program = "strata";
int g_rank = 0;

[[noreturn]] void OnTerminate() {
  const char* what = "an unknown exception";
  const char* hint = "";
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
    what = "std::terminate";
  } catch (const std::bad_alloc&) {
    what = "out of memory (std::bad_alloc)";
    hint = "; lower --pass-examples, --batch-size, --mlp, --mem-cache-gb or --prefetch-passes, or use more ranks";
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "%s: rank %d: fatal: %s%s\n", g_program, g_rank, what, hint);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace

void InstallFatalErrorHandler(const char* program, int rank) {
  g_program = program;
  g_rank = rank;
  std::set_terminate(OnTerminate);
}

}  // namespace strata
