#pragma once
// Names that become file or directory names (grid names: results/slurm/<name>; table ids:
// <out>/<id>.md, <id>.png): one plain path component, so "../../x" cannot write elsewhere.
#include <string>

namespace kvbench::harness {

// 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit.
bool is_plain_name(const std::string& name);

// What is_plain_name accepts, for error messages.
inline constexpr const char* kPlainNameRule =
    "1-100 letters, digits, '.', '_' or '-', starting with a letter or digit";

}  // namespace kvbench::harness
