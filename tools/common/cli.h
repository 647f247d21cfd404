// Command-line parsing shared by the tools built on cxxopts: one place that turns a parse
// error or a stray argument into "PROGRAM: message" and exit status 2, and --help into the
// help text and exit status 0. Header-only; call from main before anything else.
#pragma once

#include <cxxopts.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::tools {

[[noreturn]] inline void BadFlag(const char* program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::exit(2);
}

// The parsed flags; exits on -h/--help, a malformed flag or an unexpected argument.
// REQUIRES: options declares "h,help".
inline cxxopts::ParseResult ParseFlagsOrExit(cxxopts::Options& options, int argc, char** argv, const char* program) {
  cxxopts::ParseResult result;
  try {
    result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    BadFlag(program, e.what());
  }
  if (result.count("help")) {
    std::printf("%s", options.help().c_str());
    std::exit(0);
  }
  if (!result.unmatched().empty()) BadFlag(program, "unexpected argument '" + result.unmatched().front() + "'");
  return result;
}

}  // namespace strata::tools
