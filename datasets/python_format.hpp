#pragma once
// Python's str.format with keyword fields only ("{name}", "{{" and "}}"), as the reference scripts
// fill their prompt templates: a value is inserted as is, never parsed again.
#include <map>
#include <string>

namespace kvbench::datasets {

// Throws std::invalid_argument for a field without a value (Python's KeyError), a positional or
// formatted field ("{}", "{0}", "{x:>3}") or an unmatched brace, naming it.
std::string python_format(const std::string& format, const std::map<std::string, std::string>& values);

}  // namespace kvbench::datasets
