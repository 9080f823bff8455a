#pragma once
// Temporary files and folders a command owns while it runs, named after its process
// ("/tmp/kvbench-<kind>-<pid>-XXXXXX"). A command stopped by SIGINT, SIGTERM or SIGHUP removes
// its own before it dies of the signal; one killed outright (SIGKILL) cannot, so the next command
// of the same kind removes those whose process is gone.
#include <string>

namespace kvbench::harness {

// Creates a fresh file (or folder) under the temporary directory and returns its path; removes
// the orphans of `kind` first. Throws std::runtime_error naming the path when it cannot.
std::string make_process_temp(const std::string& kind, bool folder);

// Removes every "kvbench-<kind>-<pid>-..." entry of the temporary directory whose pid no longer
// runs (a live process of that pid, even an unrelated one, keeps its entry: the safe side).
void remove_orphaned_temps(const std::string& kind);

}  // namespace kvbench::harness
