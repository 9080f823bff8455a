#pragma once
// Runs the real kvbench binary (the protobuf/sentencepiece load-order trap only shows there).
#include <array>
#include <cstdio>
#include <string>

#include "shared_dir.hpp"

namespace kvbench::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout (stderr with `2>&1` in args)
};

// Runs `command` in /bin/sh (limits, redirections); stdout is captured.
inline CommandResult run_shell(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CommandResult run_kvbench(const std::string& args) { return run_shell(std::string(KVBENCH_BINARY) + " " + args); }

// The text the CLI tests feed.
inline const std::string kTinyStories = kShared + "/data/tinystories/TinyStories-valid.head.txt";

}  // namespace kvbench::testing
