// The kvbench command line: every subcommand is registered in harness/cli_app.cpp.
#include "harness/cli_app.hpp"

int main(int argc, char** argv) { return kvbench::harness::run_cli(argc, argv); }
