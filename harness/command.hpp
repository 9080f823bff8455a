#pragma once
// Each subcommand lives in its own file and registers itself here, so adding one touches no
// shared file.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kvbench::harness {

// `setup` adds the subcommand's options to `app` and returns the action to run when it is chosen.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup);
};

struct RegisteredCommand {
  std::string name;
  std::string description;
  CommandSetup setup;
};
const std::vector<RegisteredCommand>& registered_commands();

}  // namespace kvbench::harness
