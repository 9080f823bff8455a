#include "harness/cli_app.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <map>

#include "base/registry.hpp"
#include "harness/command.hpp"
#include "harness/error_message.hpp"
#include "models/cpu_threads.hpp"

namespace kvbench::harness {
namespace {
base::Registry<RegisteredCommand>& command_table() {
  static base::Registry<RegisteredCommand> table("command");
  return table;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string name, std::string description, CommandSetup setup) {
  command_table().add({std::move(name), std::move(description), std::move(setup)});
}

const std::vector<RegisteredCommand>& registered_commands() { return command_table().all(); }

int run_cli(int argc, char** argv) {
  CLI::App app{"kvbench: reproducible evaluation of KV-cache eviction policies"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kvbench ") + KVBENCH_VERSION);
  const auto& commands = registered_commands();  // sorted by name
  std::map<CLI::App*, std::function<int()>> actions;
  for (const auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    actions[sub] = command.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A bad command line is bad input like any other: one line, the same prefix, status 1.
    std::string command = "kvbench";
    for (const auto& [sub, action] : actions)
      if (sub->parsed()) command += " " + sub->get_name();
    std::cerr << "kvbench: error: " << e.what() << " (" << command << " --help lists the options)\n";
    return 1;
  }
  // Every command: the BLAS products get libtorch's thread count (OMP_NUM_THREADS, else the
  // physical cores as libtorch counts them), elementwise ops one thread, so the two pools never
  // compete (models/cpu_threads.hpp). `bench --threads` and grids set their own.
  models::use_cpu_threads(models::default_cpu_threads());
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const std::exception& e) {
    std::cerr << "kvbench: error: " << user_message(e) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace kvbench::harness
