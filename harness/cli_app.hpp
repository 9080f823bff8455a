#pragma once
#include <CLI/CLI.hpp>

namespace kvbench::harness {

// Builds the `kvbench` app with every subcommand and runs it. Errors that reach here are
// printed as one line, `kvbench: error: …`, with exit code 1 (2 for usage errors).
int run_cli(int argc, char** argv);

}  // namespace kvbench::harness
