#pragma once
// Input files must be regular files: a FIFO blocks forever on open, /dev/zero never ends, a
// directory reads as nothing. One check and one reader for every file kvbench loads.
#include <string>

namespace kvbench::datasets {

// Throws std::runtime_error "<path>: <what> is not a regular file (a FIFO|a character device|...)"
// or "<path>: no such file". `what` is e.g. "model", "text file".
void require_regular_file(const std::string& path, const std::string& what = "input");

// The whole content of a regular file (checked first); errors name the file.
std::string read_regular_file(const std::string& path, const std::string& what = "input");

// "a FIFO", "a directory", "a character device", ... for a path that exists; "" for a regular file.
std::string non_regular_kind(const std::string& path);

}  // namespace kvbench::datasets
